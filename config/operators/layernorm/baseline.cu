// CUDA baseline layernorm: one block of 256 threads per row, a pass for the
// mean, a pass for the variance, a normalizing pass, shared-memory tree
// reductions, scalar loads; fp32/bf16.
#include <cuda_runtime.h>
#include <math.h>
#include "kevolve/abi.h"

namespace {

constexpr int kThreads = 256;

__device__ float load(const void* p, int dt, int64_t i) {
  if (dt == KV_BF16) return kv_bf16_to_f32(static_cast<const uint16_t*>(p)[i]);
  return static_cast<const float*>(p)[i];
}

__device__ float block_sum(float v, float* shared) {
  shared[threadIdx.x] = v;
  __syncthreads();
  for (int s = kThreads / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) shared[threadIdx.x] += shared[threadIdx.x + s];
    __syncthreads();
  }
  const float r = shared[0];
  __syncthreads();
  return r;
}

__global__ void layernorm(const void* x, const void* gamma, const void* beta, void* y, int dt, int64_t n, float eps) {
  __shared__ float shared[kThreads];
  const int64_t base = int64_t(blockIdx.x) * n;
  float s = 0.f;
  for (int64_t i = threadIdx.x; i < n; i += kThreads) s += load(x, dt, base + i);
  const float mean = block_sum(s, shared) / float(n);
  float q = 0.f;
  for (int64_t i = threadIdx.x; i < n; i += kThreads) {
    const float d = load(x, dt, base + i) - mean;
    q += d * d;
  }
  const float rstd = 1.f / sqrtf(block_sum(q, shared) / float(n) + eps);
  for (int64_t i = threadIdx.x; i < n; i += kThreads) {
    const float v = (load(x, dt, base + i) - mean) * rstd * load(gamma, dt, i) + load(beta, dt, i);
    if (dt == KV_BF16) static_cast<uint16_t*>(y)[base + i] = kv_f32_to_bf16(v);
    else static_cast<float*>(y)[base + i] = v;
  }
}

}  // namespace

extern "C" int kevolve_kernel(const kv_args* a, cudaStream_t stream) {
  const kv_tensor& x = a->inputs[0];
  if (x.dtype != KV_F32 && x.dtype != KV_BF16) return KV_ERR_UNSUPPORTED;
  if (x.dims[0] == 0) return KV_OK;
  layernorm<<<unsigned(x.dims[0]), kThreads, 0, stream>>>(x.data, a->inputs[1].data, a->inputs[2].data,
                                                          a->outputs[0].data, x.dtype, x.dims[1], float(a->params[0].f));
  return cudaGetLastError() == cudaSuccess ? KV_OK : KV_ERR_INTERNAL;
}
