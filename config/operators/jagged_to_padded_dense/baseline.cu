// CUDA baseline jagged_to_padded_dense: one thread per output element, the
// sequence's offsets read per element, scalar copy or zero.
#include <cuda_runtime.h>
#include "kevolve/abi.h"

namespace {

__global__ void pad(const float* values, const int64_t* off, float* out, int64_t bsz, int64_t l, int64_t d) {
  const int64_t q = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (q >= bsz * l * d) return;
  const int64_t c = q % d, r = (q / d) % l, b = q / (d * l);
  const int64_t start = off[b], len = off[b + 1] - start;
  out[q] = r < len ? values[(start + r) * d + c] : 0.f;
}

}  // namespace

extern "C" int kevolve_kernel(const kv_args* a, cudaStream_t stream) {
  const kv_tensor& out = a->outputs[0];
  const int64_t total = kv_numel(&out);
  if (total == 0) return KV_OK;
  pad<<<unsigned((total + 255) / 256), 256, 0, stream>>>(static_cast<const float*>(a->inputs[0].data),
                                                         static_cast<const int64_t*>(a->inputs[1].data),
                                                         static_cast<float*>(out.data), out.dims[0], out.dims[1],
                                                         out.dims[2]);
  return cudaGetLastError() == cudaSuccess ? KV_OK : KV_ERR_INTERNAL;
}
