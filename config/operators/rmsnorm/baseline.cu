// CUDA baseline rmsnorm: one block of 256 threads per row, a pass for the sum
// of squares, a scaling pass, shared-memory tree reduction, scalar loads;
// fp32/fp16.
#include <cuda_runtime.h>
#include <math.h>
#include "kevolve/abi.h"

namespace {

constexpr int kThreads = 256;

__device__ float load(const void* p, int dt, int64_t i) {
  if (dt == KV_F16) return kv_f16_to_f32(static_cast<const uint16_t*>(p)[i]);
  return static_cast<const float*>(p)[i];
}

__global__ void rmsnorm(const void* x, const void* gamma, void* y, int dt, int64_t n, float eps) {
  __shared__ float shared[kThreads];
  const int64_t base = int64_t(blockIdx.x) * n;
  float q = 0.f;
  for (int64_t i = threadIdx.x; i < n; i += kThreads) {
    const float v = load(x, dt, base + i);
    q += v * v;
  }
  shared[threadIdx.x] = q;
  __syncthreads();
  for (int s = kThreads / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) shared[threadIdx.x] += shared[threadIdx.x + s];
    __syncthreads();
  }
  const float r = 1.f / sqrtf(shared[0] / float(n) + eps);
  for (int64_t i = threadIdx.x; i < n; i += kThreads) {
    const float v = load(x, dt, base + i) * r * load(gamma, dt, i);
    if (dt == KV_F16) static_cast<uint16_t*>(y)[base + i] = kv_f32_to_f16(v);
    else static_cast<float*>(y)[base + i] = v;
  }
}

}  // namespace

extern "C" int kevolve_kernel(const kv_args* a, cudaStream_t stream) {
  const kv_tensor& x = a->inputs[0];
  if (x.dtype != KV_F32 && x.dtype != KV_F16) return KV_ERR_UNSUPPORTED;
  if (x.dims[0] == 0) return KV_OK;
  rmsnorm<<<unsigned(x.dims[0]), kThreads, 0, stream>>>(x.data, a->inputs[1].data, a->outputs[0].data, x.dtype,
                                                        x.dims[1], float(a->params[0].f));
  return cudaGetLastError() == cudaSuccess ? KV_OK : KV_ERR_INTERNAL;
}
