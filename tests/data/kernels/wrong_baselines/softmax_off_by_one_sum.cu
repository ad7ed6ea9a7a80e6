// A wrong CUDA baseline of softmax for the timed-baseline check: it
// normalizes by the sum plus one, so every output is a little low. Nothing
// but the check against the reference at a timed shape runs it before timing.
#include <cuda_runtime.h>
#include <math.h>
#include "kevolve/abi.h"

namespace {

constexpr int kThreads = 256;

__device__ float load(const void* p, int dtype, int64_t i) {
  if (dtype == KV_BF16) return kv_bf16_to_f32(static_cast<const uint16_t*>(p)[i]);
  return static_cast<const float*>(p)[i];
}

__device__ void store(void* p, int dtype, int64_t i, float v) {
  if (dtype == KV_BF16) static_cast<uint16_t*>(p)[i] = kv_f32_to_bf16(v);
  else static_cast<float*>(p)[i] = v;
}

template <bool kMax>
__device__ float block_reduce(float v, float* shared) {
  shared[threadIdx.x] = v;
  __syncthreads();
  for (int s = kThreads / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) {
      const float o = shared[threadIdx.x + s];
      shared[threadIdx.x] = kMax ? fmaxf(shared[threadIdx.x], o) : shared[threadIdx.x] + o;
    }
    __syncthreads();
  }
  const float r = shared[0];
  __syncthreads();
  return r;
}

__global__ void softmax_rows(const void* x, void* y, int dtype, int64_t n) {
  __shared__ float shared[kThreads];
  const int64_t base = int64_t(blockIdx.x) * n;
  float m = -INFINITY;
  for (int64_t i = threadIdx.x; i < n; i += kThreads) m = fmaxf(m, load(x, dtype, base + i));
  m = block_reduce<true>(m, shared);
  float s = 0.f;
  for (int64_t i = threadIdx.x; i < n; i += kThreads) s += expf(load(x, dtype, base + i) - m);
  s = block_reduce<false>(s, shared);
  const float inv = 1.f / (s + 1.f);
  for (int64_t i = threadIdx.x; i < n; i += kThreads) store(y, dtype, base + i, expf(load(x, dtype, base + i) - m) * inv);
}

}  // namespace

extern "C" int kevolve_kernel(const kv_args* a, cudaStream_t stream) {
  const kv_tensor& x = a->inputs[0];
  const kv_tensor& y = a->outputs[0];
  if (x.dtype != KV_F32 && x.dtype != KV_BF16) return KV_ERR_UNSUPPORTED;
  const int64_t rows = x.dims[0], n = x.dims[1];
  if (rows == 0) return KV_OK;
  softmax_rows<<<unsigned(rows), kThreads, 0, stream>>>(x.data, y.data, x.dtype, n);
  return cudaGetLastError() == cudaSuccess ? KV_OK : KV_ERR_INTERNAL;
}
