// Softmax with one 64-lane wavefront per row and the wave size hard-coded
// (butterflies from offset 32, 64 threads per row): right on CDNA. Through
// the HIP-on-CUDA header the wave is CUDA's 32-lane warp, so the row's two
// halves never meet: a wrong result there, which is the header being honest
// about the wave size (a header that faked 64 lanes would hide such bugs).
#include <hip/hip_runtime.h>
#include <math.h>
#include "kevolve/abi.h"

__device__ float wave_reduce(float v, bool max) {
  for (int o = 32; o > 0; o >>= 1) {
    const float w = __shfl_xor(v, o);
    v = max ? fmaxf(v, w) : v + w;
  }
  return v;
}

__global__ void softmax_rows(const float* x, float* y, int64_t n) {
  const float* xr = x + int64_t(blockIdx.x) * n;
  float* yr = y + int64_t(blockIdx.x) * n;
  float m = -INFINITY;
  for (int64_t i = threadIdx.x; i < n; i += 64) m = fmaxf(m, xr[i]);
  m = wave_reduce(m, true);
  float s = 0.f;
  for (int64_t i = threadIdx.x; i < n; i += 64) s += expf(xr[i] - m);
  s = wave_reduce(s, false);
  for (int64_t i = threadIdx.x; i < n; i += 64) yr[i] = expf(xr[i] - m) / s;
}

extern "C" int kevolve_kernel(const kv_args* a, hipStream_t stream) {
  if (a->inputs[0].dtype != KV_F32) return KV_ERR_UNSUPPORTED;
  const int64_t rows = a->inputs[0].dims[0], n = a->inputs[0].dims[1];
  hipLaunchKernelGGL(softmax_rows, dim3(unsigned(rows)), dim3(64), 0, stream, static_cast<const float*>(a->inputs[0].data),
                     static_cast<float*>(a->outputs[0].data), n);
  return hipGetLastError() == hipSuccess ? KV_OK : KV_ERR_INTERNAL;
}
