// CUDA baseline bucketize: one thread per element, a textbook binary search
// (lower_bound) over the boundaries in global memory.
#include <cuda_runtime.h>
#include "kevolve/abi.h"

namespace {

__global__ void bucketize(const float* x, const float* b, int* out, int64_t n, int64_t nb) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const float v = x[i];
  int64_t lo = 0, hi = nb;
  while (lo < hi) {
    const int64_t mid = (lo + hi) / 2;
    if (b[mid] < v) lo = mid + 1;
    else hi = mid;
  }
  out[i] = int(lo);
}

}  // namespace

extern "C" int kevolve_kernel(const kv_args* a, cudaStream_t stream) {
  const int64_t n = kv_numel(&a->inputs[0]), nb = kv_numel(&a->inputs[1]);
  if (n == 0) return KV_OK;
  bucketize<<<unsigned((n + 255) / 256), 256, 0, stream>>>(static_cast<const float*>(a->inputs[0].data),
                                                          static_cast<const float*>(a->inputs[1].data),
                                                          static_cast<int*>(a->outputs[0].data), n, nb);
  return cudaGetLastError() == cudaSuccess ? KV_OK : KV_ERR_INTERNAL;
}
