// nvcc -G and -O3 -arch=sm_90 -ptx: h_relu_sm90_G.ptx, h_relu_sm90_O3.ptx (issue 40 item 6).
// -G declares each call sequence's .param anew: param0 is .b32 in __float2half's
// call and .b8[2] in __hgt's, and the paths of the ?: meet holding both.
#include <cuda_fp16.h>
extern "C" __global__ void h_relu(__half* o, const __half* i){ int t=threadIdx.x; o[t] = __hgt(i[t], __float2half(0.f)) ? i[t] : __float2half(0.f); }
