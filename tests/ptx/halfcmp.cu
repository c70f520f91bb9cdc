// Half-precision compares and selects (cuda_fp16.hpp / cuda_bf16.hpp inline asm).
#include <cuda_fp16.h>
#include <cuda_bf16.h>
__global__ void h(const __half* a, const __half* b, __half* out, bool* lt) {
  int i = threadIdx.x;
  lt[i] = __hlt(a[i], b[i]) || __hisnan(a[i]);
  out[i] = __hmax(a[i], b[i]);
}
__global__ void bf(const __nv_bfloat162* a, const __nv_bfloat162* b, __nv_bfloat162* o,
                   unsigned* m) {
  int i = threadIdx.x;
  o[i] = __hge2(a[i], b[i]);
  m[i] = __hle2_mask(a[i], b[i]) ^ (__hbgtu2(a[i], b[i]) ? 1u : 0u);
}
__global__ void pred(const int* a, int* o, int n) {
  int i = threadIdx.x;
  int v = a[i];
  if (v > n) v = n;          // becomes min
  if (v < -n) v = -n;        // becomes max
  o[i] = (unsigned)v >= 7u ? v : -v;
  if (v == 3) o[i + 1] = 1;  // a guarded store
}
