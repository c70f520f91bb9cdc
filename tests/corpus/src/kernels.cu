// Small kernels for ptxsmt's function corpus (scripts/make_function_corpus.py compiles them
// with nvcc -ptx -G and -O3 for sm_80, sm_53 and sm_90). Each is free of undefined behaviour
// on every input (shift amounts masked, divisors nonzero), so every build must agree.
#include <cuda_fp16.h>

extern "C" __global__ void k_max(const int* a, const int* b, int* o) {
  int i = threadIdx.x;
  o[i] = max(a[i], b[i]);
}
extern "C" __global__ void k_umin(const unsigned* a, unsigned* o, unsigned lim) {
  o[0] = min(a[0], lim);
}
extern "C" __global__ void k_clamp(const int* a, int* o, int lo, int hi) {
  int v = a[threadIdx.x];
  o[threadIdx.x] = v < lo ? lo : (v > hi ? hi : v);
}
extern "C" __global__ void k_fminf(const float* a, const float* b, float* o) {
  o[0] = fminf(a[0], b[0]);
}
extern "C" __global__ void k_fmaxf(float a, float b, float* o) {
  o[0] = fmaxf(a, b);
}
extern "C" __global__ void k_fabs_neg(float a, float* o) {
  o[0] = -fabsf(a);
}
extern "C" __global__ void k_fcmp(float a, float b, int* o) {
  o[0] = (a < b) + 2 * (a == b) + 4 * (a != b) + 8 * (a >= b);
}
extern "C" __global__ void k_hlt(__half a, __half b, int* o) {
  o[0] = __hlt(a, b) ? 5 : 9;
}
extern "C" __global__ void k_hmax(__half a, __half b, __half* o) {
  o[0] = __hgt(a, b) ? a : b;
}
extern "C" __global__ void k_hneg(__half a, __half* o) {
  o[0] = __hneg(a);
}
extern "C" __global__ void k_f2h(float a, __half* o) {
  o[0] = __float2half_rn(a);
}
extern "C" __global__ void k_rotl(unsigned x, unsigned s, unsigned* o) {
  s &= 31;
  o[0] = (x << s) | (x >> ((32 - s) & 31));
}
extern "C" __global__ void k_rotl_const(unsigned x, unsigned* o) {
  o[0] = (x << 5) | (x >> 27);
}
extern "C" __global__ void k_rotl64(unsigned long long x, unsigned* s, unsigned long long* o) {
  unsigned k = s[0] & 63;
  o[0] = (x << k) | (x >> ((64 - k) & 63));
}
extern "C" __global__ void k_popc(unsigned x, int* o) {
  o[0] = __popc(x) + __clz(x);
}
extern "C" __global__ void k_brev(unsigned x, unsigned* o) {
  o[0] = __brev(x) ^ __byte_perm(x, 0, 0x0123);
}
extern "C" __global__ void k_div2(unsigned x, unsigned* o) {
  o[0] = x / 2 + x % 8;
}
extern "C" __global__ void k_sdiv(int x, int* o) {
  o[0] = x / 5 - x % 3;
}
extern "C" __global__ void k_mulhi(int a, int b, int* o) {
  o[0] = __mulhi(a, b) + __umulhi((unsigned)a, (unsigned)b);
}
extern "C" __global__ void k_wide(int a, int b, long long* o) {
  o[0] = (long long)a * b;
}
extern "C" __global__ void k_shift(int a, unsigned s, int* o) {
  o[0] = (a >> (s & 31)) ^ (int)((unsigned)a << (s & 15));
}
extern "C" __global__ void k_cvt(float a, int* o, unsigned* p) {
  o[0] = __float2int_rz(a);
  p[0] = __float2uint_rn(a);
}
extern "C" __global__ void k_i2f(int a, float* o, double* p) {
  o[0] = (float)a;
  p[0] = (double)a * 0.5;
}
extern "C" __global__ void k_switch(int k, int* o) {
  int r;
  switch (k) {
    case 0: r = 11; break;
    case 1: r = 24; break;
    case 2: r = 39; break;
    case 3: r = 4; break;
    case 4: r = 57; break;
    case 5: r = 61; break;
    default: r = -1;
  }
  o[0] = r;
}
extern "C" __global__ void k_branch(const int* a, int* o, int n) {
  int i = threadIdx.x;
  if (i < n && a[i] > 0) o[i] = a[i];
}
extern "C" __global__ void k_select_chain(int a, int b, int c, int* o) {
  int r = a;
  if (b > r) r = b;
  if (c > r) r = c;
  o[0] = r;
}
extern "C" __global__ void k_bytes(const signed char* a, const unsigned short* b, int* o) {
  o[0] = a[0] + b[1];
}
extern "C" __global__ void k_vec2(const int2* a, int* o) {
  int2 v = a[0];
  o[0] = v.x - v.y;
}
extern "C" __global__ void k_shared(const int* a, int* o) {
  __shared__ int s[4];
  s[0] = a[0];
  s[1] = a[1] * 2;
  o[0] = s[0] + s[1];
}
extern "C" __global__ void k_local(const int* a, int* o, int k) {
  int t[4];
  t[0] = a[0]; t[1] = a[1]; t[2] = a[2]; t[3] = a[3];
  o[0] = t[k & 3];
}
extern "C" __global__ void k_loop4(const int* a, int* o) {
  int s = 0;
#pragma unroll 1
  for (int k = 0; k < 4; k++) s += a[k] * k;
  o[0] = s;
}
extern "C" __global__ void k_unrolled(const int* a, int* o) {
  int s = 0;
#pragma unroll
  for (int k = 0; k < 4; k++) s ^= a[k] << k;
  o[0] = s;
}
__device__ __noinline__ unsigned dsel(unsigned x, unsigned y) { return x > y ? x - y : y; }
extern "C" __global__ void k_call(unsigned* p) { p[0] = dsel(p[0], 5u); }
__device__ __forceinline__ int sq(int x) { return x * x; }
extern "C" __global__ void k_inline(int a, int* o) { o[0] = sq(a) + sq(a + 1); }
extern "C" __global__ void k_fma(float a, float b, float c, float* o) {
  o[0] = fmaf(a, b, c);
}
extern "C" __global__ void k_fmul_add(float a, float b, float c, float* o) {
  o[0] = a * b + c;
}
extern "C" __global__ void k_tid(int* o) {
  o[threadIdx.x + blockIdx.x * blockDim.x] = threadIdx.y;
}
extern "C" __global__ void k_half2(__half2 a, __half2 b, __half2* o) {
  o[0] = __hadd2(a, b);
}
extern "C" __global__ void k_u64cmp(unsigned long long a, unsigned long long b, int* o) {
  o[0] = a < b ? 1 : (a == b ? 2 : 3);
}
extern "C" __global__ void k_shfl(int v, int* o) {
  o[threadIdx.x] = __shfl_sync(0xffffffffu, v, 0) + 1;
}
extern "C" __global__ void k_atomic(int* p, int v, int* o) {
  o[0] = atomicAdd(p, v);
}
extern "C" __global__ void k_printf(int v) {
  printf("%d\n", v);
}
extern "C" __global__ void k_saturate(float a, float* o) {
  o[0] = __saturatef(a);
}
extern "C" __global__ void k_fastdiv(float a, float b, float* o) {
  o[0] = __fdividef(a, b) + rsqrtf(a);
}
extern "C" __global__ void k_divvar(unsigned a, unsigned b, unsigned* o) {
  o[0] = a / (b | 1u) + a % (b | 1u);
}
extern "C" __global__ void k_h2cmp(__half2 a, __half2 b, unsigned* o) {
  o[0] = __hblt2(a, b) ? 1u : 0u;
}
extern "C" __global__ void k_sync_shared(const int* a, int* o) {
  __shared__ int s[32];
  s[threadIdx.x & 31] = a[threadIdx.x];
  __syncthreads();
  o[threadIdx.x] = s[(threadIdx.x + 1) & 31];
}
extern "C" __global__ void k_dmath(double a, double b, double* o) {
  o[0] = fma(a, b, 1.0) + sqrt(a) + a / b;
}
extern "C" __global__ void k_select_f(float a, float b, float* o) {
  o[0] = a > b ? a - b : b * 2.0f;
}
