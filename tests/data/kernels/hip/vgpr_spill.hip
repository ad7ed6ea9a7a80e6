// Needs about 192 live floats per lane under __launch_bounds__(1024), which
// caps a lane at 128 VGPRs on CDNA: the compiler spills to scratch, and the hip
// backend refuses it (compile_failed, "exceeds the VGPR limit").
#include <hip/hip_runtime.h>
#include "kevolve/abi.h"
#define N 192
__global__ void __launch_bounds__(1024) heavy(const float* in, float* out) {
  float v[N];
#pragma unroll
  for (int i = 0; i < N; ++i) v[i] = in[threadIdx.x + i * 1024];
  __syncthreads();
  float s = 0.f;
#pragma unroll
  for (int i = 0; i < N; ++i) s += v[i] * v[N - 1 - i] + v[(i * 37) % N];
  out[threadIdx.x] = s;
}
extern "C" int kevolve_kernel(const kv_args* a, hipStream_t s) {
  hipLaunchKernelGGL(heavy, dim3(1), dim3(1024), 0, s, static_cast<const float*>(a->inputs[0].data), static_cast<float*>(a->outputs[0].data));
  return hipGetLastError() == hipSuccess ? 0 : 3;
}
