// Baseline jagged_to_padded_dense: what a competent engineer writes without tuning.
// Per output row: copy the value row or fill zeros; OpenMP over sequences.
#include <cstdint>
#include "kevolve/abi.h"

extern "C" int kevolve_kernel(const kv_args* a) {
  const kv_tensor& values = a->inputs[0];
  const kv_tensor& out = a->outputs[0];
  const int64_t nseq = out.dims[0], max_len = out.dims[1], dim = out.dims[2];
  const float* vp = static_cast<const float*>(values.data);
  const int64_t* op = static_cast<const int64_t*>(a->inputs[1].data);
  float* yp = static_cast<float*>(out.data);
#pragma omp parallel for num_threads(a->num_threads)
  for (int64_t b = 0; b < nseq; ++b) {
    const int64_t len = op[b + 1] - op[b];
    const int64_t n = len < max_len ? len : max_len;
    for (int64_t l = 0; l < max_len; ++l) {
      float* dst = yp + b * out.strides[0] + l * out.strides[1];
      if (l < n) {
        const float* src = vp + (op[b] + l) * values.strides[0];
        for (int64_t d = 0; d < dim; ++d) dst[d] = src[d];
      } else {
        for (int64_t d = 0; d < dim; ++d) dst[d] = 0.f;
      }
    }
  }
  return KV_OK;
}
