#include <cuda_fp16.h>
__global__ void mm(const int* a, const int* b, int* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = min(a[i], b[i]) + max(a[i], b[i]) + (a[i] < b[i] ? 7 : 3);
}
__global__ void fsel(const float* a, const float* b, float* out, int n) {
  int i = threadIdx.x;
  if (i < n) out[i] = (a[i] <= b[i] || isnan(a[i])) ? fminf(a[i], b[i]) : fmaxf(a[i], 1.0f);
}
__global__ void hcmp(const __half2* a, const __half2* b, __half2* out, unsigned* m) {
  int i = threadIdx.x;
  out[i] = __hlt2(a[i], b[i]);
  m[i] = __hgt2_mask(a[i], b[i]) | (__hbeq2(a[i], b[i]) ? 1u : 0u);
}
__device__ __noinline__ unsigned dsel(unsigned x, unsigned y) { return x > y ? x - y : y; }
__global__ void call(unsigned* p) { p[threadIdx.x] = dsel(p[threadIdx.x], 5u); }
