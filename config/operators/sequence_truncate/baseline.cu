// CUDA baseline sequence_truncate: one thread computes out_offsets serially,
// then one thread per output element finds its sequence by binary search in
// out_offsets and copies or zero-fills.
#include <cuda_runtime.h>
#include "kevolve/abi.h"

namespace {

__global__ void lengths(const int64_t* off, int64_t* out_off, int64_t bsz, int64_t k) {
  int64_t run = 0;
  out_off[0] = 0;
  for (int64_t b = 0; b < bsz; ++b) {
    const int64_t len = off[b + 1] - off[b];
    run += len < k ? len : k;
    out_off[b + 1] = run;
  }
}

__global__ void copy(const float* values, const int64_t* off, const int64_t* out_off, float* out, int64_t bsz, int64_t k,
                     int64_t d) {
  const int64_t q = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (q >= bsz * k * d) return;
  const int64_t row = q / d, c = q % d;
  if (row >= out_off[bsz]) {
    out[q] = 0.f;
    return;
  }
  int64_t lo = 0, hi = bsz;  // last b with out_off[b] <= row
  while (hi - lo > 1) {
    const int64_t mid = (lo + hi) / 2;
    if (out_off[mid] <= row) lo = mid;
    else hi = mid;
  }
  const int64_t n = out_off[lo + 1] - out_off[lo];
  const int64_t r = row - out_off[lo];
  out[q] = values[(off[lo + 1] - n + r) * d + c];
}

}  // namespace

extern "C" int kevolve_kernel(const kv_args* a, cudaStream_t stream) {
  const int64_t bsz = a->outputs[0].dims[0] - 1, k = a->params[0].i, d = a->outputs[1].dims[1];
  const auto* off = static_cast<const int64_t*>(a->inputs[1].data);
  auto* out_off = static_cast<int64_t*>(a->outputs[0].data);
  lengths<<<1, 1, 0, stream>>>(off, out_off, bsz, k);
  const int64_t total = bsz * k * d;
  if (total > 0)
    copy<<<unsigned((total + 255) / 256), 256, 0, stream>>>(static_cast<const float*>(a->inputs[0].data), off, out_off,
                                                            static_cast<float*>(a->outputs[1].data), bsz, k, d);
  return cudaGetLastError() == cudaSuccess ? KV_OK : KV_ERR_INTERNAL;
}
