// CUDA baseline feature_hash: one thread per id, fmix64 and the % operator.
#include <cuda_runtime.h>
#include "kevolve/abi.h"

namespace {

__global__ void hash(const int64_t* ids, int64_t* out, int64_t n, uint64_t table, uint64_t salt) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  uint64_t k = uint64_t(ids[i]) ^ salt;
  k ^= k >> 33;
  k *= 0xff51afd7ed558ccdull;
  k ^= k >> 33;
  k *= 0xc4ceb9fe1a85ec53ull;
  k ^= k >> 33;
  out[i] = int64_t(k % table);
}

}  // namespace

extern "C" int kevolve_kernel(const kv_args* a, cudaStream_t stream) {
  const int64_t n = kv_numel(&a->inputs[0]);
  if (n == 0) return KV_OK;
  hash<<<unsigned((n + 255) / 256), 256, 0, stream>>>(static_cast<const int64_t*>(a->inputs[0].data),
                                                     static_cast<int64_t*>(a->outputs[0].data), n,
                                                     uint64_t(a->params[0].i), uint64_t(a->params[1].i));
  return cudaGetLastError() == cudaSuccess ? KV_OK : KV_ERR_INTERNAL;
}
