// Kernels of the kinds the held-out mix holds and kernels.cu lacked: lookup tables in
// __constant__ memory and in a local array, loops with a bound from a parameter, atomics of
// every integer kind, switches, early exits, struct parameters. UB-free on every input.
#include <cuda_fp16.h>

__constant__ int c_fib[8] = {1, 1, 2, 3, 5, 8, 13, 21};

struct Pair { int a; short b; char c; };

extern "C" __global__ void m_const_lookup(unsigned i, int* o) {
  o[0] = c_fib[i & 7];
}
extern "C" __global__ void m_local_table(unsigned i, int* o) {
  const int t[5] = {4, 9, 16, 25, 36};
  o[0] = t[i % 5];
}
extern "C" __global__ void m_switch(int x, int* o) {
  int r;
  switch (x) {
    case 0: r = 17; break;
    case 1: r = 3; break;
    case 2: r = 99; break;
    case 3: r = -4; break;
    case 4: r = 8; break;
    case 5: r = 1000; break;
    default: r = (int)((unsigned)x * 2u);
  }
  o[0] = r;
}
extern "C" __global__ void m_loop_n(const unsigned* a, int n, unsigned* o) {
  unsigned s = 0;
  for (int i = 0; i < n; i++) s += a[i];
  o[0] = s;
}
extern "C" __global__ void m_loop_fixed(const unsigned* a, unsigned* o) {
  unsigned s = 0;
  #pragma unroll 1
  for (unsigned i = 0; i < 3; i++) s += a[i] * (i + 1);
  o[0] = s;
}
extern "C" __global__ void m_atomics(int* p, unsigned* q, int v, int* o) {
  o[0] = atomicMax(p, v);
  o[1] = atomicMin(p + 1, v);
  o[2] = atomicExch(p + 2, v);
  o[3] = atomicCAS(p + 3, 5, v);
  o[4] = atomicAnd(p + 4, v);
  o[5] = atomicOr(p + 5, v);
  o[6] = atomicXor(p + 6, v);
  o[7] = (int)atomicInc(q, 10u);
  o[8] = (int)atomicDec(q + 1, 10u);
  atomicSub(p + 7, v);
}
extern "C" __global__ void m_atomic_shared(int v, int* o) {
  __shared__ int s[4];
  s[threadIdx.x & 3] = 0;
  o[0] = atomicAdd(&s[threadIdx.x & 3], v);
}
extern "C" __global__ void m_early_exit(const int* a, unsigned* o, int n) {
  unsigned i = threadIdx.x;
  if (i >= (unsigned)n) return;
  o[i] = a[i] > 0 ? (unsigned)a[i] : 0u - (unsigned)a[i];
}
extern "C" __global__ void m_struct(Pair p, unsigned* o) {
  o[0] = (unsigned)p.a + (unsigned)(p.b * p.c);
}
extern "C" __global__ void m_half_params(__half a, __half b, __half* o) {
  o[0] = __hadd(a, b);
}
extern "C" __global__ void m_bytes(const unsigned char* a, unsigned* o) {
  o[0] = a[0] | (a[1] << 8) | (a[2] << 16) | ((unsigned)a[3] << 24);
}
extern "C" __global__ void m_u64(unsigned long long a, unsigned long long b, unsigned long long* o) {
  o[0] = a * b + (a >> 7) - (b << 3);
}
