// CUDA baseline dot_interaction: one thread per (sample, pair), the dot
// product read straight from global memory, fp32 accumulation; fp32/bf16.
#include <cuda_runtime.h>
#include "kevolve/abi.h"

namespace {

__device__ float load(const void* p, int dt, int64_t i) {
  if (dt == KV_BF16) return kv_bf16_to_f32(static_cast<const uint16_t*>(p)[i]);
  if (dt == KV_F16) return kv_f16_to_f32(static_cast<const uint16_t*>(p)[i]);
  return static_cast<const float*>(p)[i];
}

__global__ void interact(const void* x, void* out, int dt, int64_t bsz, int64_t f, int64_t d) {
  const int64_t pairs = f * (f - 1) / 2;
  const int64_t q = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (q >= bsz * pairs) return;
  const int64_t b = q / pairs, p = q % pairs;
  int64_t i = 1;
  while ((i + 1) * i / 2 <= p) ++i;
  const int64_t j = p - i * (i - 1) / 2;
  float acc = 0.f;
  for (int64_t k = 0; k < d; ++k) acc += load(x, dt, (b * f + i) * d + k) * load(x, dt, (b * f + j) * d + k);
  if (dt == KV_BF16) static_cast<uint16_t*>(out)[q] = kv_f32_to_bf16(acc);
  else if (dt == KV_F16) static_cast<uint16_t*>(out)[q] = kv_f32_to_f16(acc);
  else static_cast<float*>(out)[q] = acc;
}

}  // namespace

extern "C" int kevolve_kernel(const kv_args* a, cudaStream_t stream) {
  const kv_tensor& x = a->inputs[0];
  const int64_t total = kv_numel(&a->outputs[0]);
  if (total == 0) return KV_OK;
  interact<<<unsigned((total + 255) / 256), 256, 0, stream>>>(x.data, a->outputs[0].data, x.dtype, x.dims[0], x.dims[1],
                                                              x.dims[2]);
  return cudaGetLastError() == cudaSuccess ? KV_OK : KV_ERR_INTERNAL;
}
