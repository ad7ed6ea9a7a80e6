// CUDA baseline embedding_bag_sum: one thread per (bag, column), a loop over
// the bag's indices with scalar loads, fp32 accumulation; fp32/fp16.
#include <cuda_runtime.h>
#include "kevolve/abi.h"

namespace {

__global__ void bags(const void* table, const int64_t* idx, const int64_t* off, void* out, int dt, int64_t nbags,
                     int64_t d) {
  const int64_t q = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (q >= nbags * d) return;
  const int64_t b = q / d, c = q % d;
  float acc = 0.f;
  for (int64_t k = off[b]; k < off[b + 1]; ++k) {
    const int64_t e = idx[k] * d + c;
    acc += dt == KV_F16 ? kv_f16_to_f32(static_cast<const uint16_t*>(table)[e])
         : dt == KV_BF16 ? kv_bf16_to_f32(static_cast<const uint16_t*>(table)[e])
                         : static_cast<const float*>(table)[e];
  }
  if (dt == KV_F16) static_cast<uint16_t*>(out)[q] = kv_f32_to_f16(acc);
  else if (dt == KV_BF16) static_cast<uint16_t*>(out)[q] = kv_f32_to_bf16(acc);
  else static_cast<float*>(out)[q] = acc;
}

}  // namespace

extern "C" int kevolve_kernel(const kv_args* a, cudaStream_t stream) {
  const kv_tensor& out = a->outputs[0];
  const int64_t total = kv_numel(&out);
  if (total == 0) return KV_OK;
  bags<<<unsigned((total + 255) / 256), 256, 0, stream>>>(a->inputs[0].data,
                                                          static_cast<const int64_t*>(a->inputs[1].data),
                                                          static_cast<const int64_t*>(a->inputs[2].data), out.data,
                                                          out.dtype, out.dims[0], out.dims[1]);
  return cudaGetLastError() == cudaSuccess ? KV_OK : KV_ERR_INTERNAL;
}
