// Functions for `eval FILE.ptx` and `equiv A.ptx B.ptx` (tests/test_function.py):
// nvcc -ptx -arch=sm_90 -O3 func.cu -o func_sm90_O3.ptx; -G gives func_sm90_G.ptx.
// func_sm90_O3_wrong.ptx is the -O3 file with pick's setp.lt.s32 made setp.le.s32.
__global__ void pick(const int* a, const int* b, int* o, int x, int y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (a[i] < b[i]) o[i] = x; else o[i] = y;
}
__global__ void clamp(const int* a, int* o, int lo, int hi) {
  int i = threadIdx.x;
  int v = a[i];
  o[i] = v < lo ? lo : (v > hi ? hi : v);
}
__global__ void keep(const int* a, int* o, int n) {
  int i = threadIdx.x;
  if (i < n && a[i] > 0) o[i] = a[i];
}
__global__ void umax2(const unsigned* a, unsigned* o) {
  unsigned i = threadIdx.x;
  unsigned p = a[2 * i], q = a[2 * i + 1];
  o[i] = p > q ? p : q;
}
__device__ __noinline__ unsigned dsel(unsigned x, unsigned y) { return x > y ? x - y : y; }
__global__ void call(unsigned* p) { p[threadIdx.x] = dsel(p[threadIdx.x], 5u); }
__global__ void sum(const int* a, int* o, int n) {
  int s = 0;
  for (int k = 0; k < n; k++) s += a[k];
  *o = s;
}
