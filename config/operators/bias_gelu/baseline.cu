// CUDA baseline bias_gelu: one thread per element, scalar loads, erff; fp32/bf16/fp16.
#include <cuda_runtime.h>
#include <math.h>
#include "kevolve/abi.h"

namespace {

__device__ float load(const void* p, int dt, int64_t i) {
  if (dt == KV_BF16) return kv_bf16_to_f32(static_cast<const uint16_t*>(p)[i]);
  if (dt == KV_F16) return kv_f16_to_f32(static_cast<const uint16_t*>(p)[i]);
  return static_cast<const float*>(p)[i];
}
__device__ void store(void* p, int dt, int64_t i, float v) {
  if (dt == KV_BF16) static_cast<uint16_t*>(p)[i] = kv_f32_to_bf16(v);
  else if (dt == KV_F16) static_cast<uint16_t*>(p)[i] = kv_f32_to_f16(v);
  else static_cast<float*>(p)[i] = v;
}

__global__ void bias_gelu(const void* x, const void* bias, void* y, int dt, int64_t total, int64_t n) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= total) return;
  const float v = load(x, dt, i) + load(bias, dt, i % n);
  store(y, dt, i, 0.5f * v * (1.f + erff(v * 0.70710678118654752f)));
}

}  // namespace

extern "C" int kevolve_kernel(const kv_args* a, cudaStream_t stream) {
  const kv_tensor& x = a->inputs[0];
  const int64_t total = kv_numel(&x), n = x.dims[x.rank - 1];
  if (total == 0) return KV_OK;
  bias_gelu<<<unsigned((total + 255) / 256), 256, 0, stream>>>(x.data, a->inputs[1].data, a->outputs[0].data, x.dtype,
                                                               total, n);
  return cudaGetLastError() == cudaSuccess ? KV_OK : KV_ERR_INTERNAL;
}
