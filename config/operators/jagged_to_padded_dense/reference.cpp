// Reference jagged_to_padded_dense: out[b, l, :] = values[offsets[b] + l, :] for
// l < min(len_b, L), else 0. fp64.
#include <cstdint>
#include "kevolve/abi.h"

extern "C" int kevolve_kernel(const kv_args* a) {
  const kv_tensor& values = a->inputs[0];
  const kv_tensor& offsets = a->inputs[1];
  const kv_tensor& out = a->outputs[0];
  const int64_t nseq = out.dims[0], max_len = out.dims[1], dim = out.dims[2];
  const double* vp = static_cast<const double*>(values.data);
  const int64_t* op = static_cast<const int64_t*>(offsets.data);
  double* yp = static_cast<double*>(out.data);
  for (int64_t b = 0; b < nseq; ++b) {
    const int64_t begin = op[b * offsets.strides[0]];
    const int64_t len = op[(b + 1) * offsets.strides[0]] - begin;
    for (int64_t l = 0; l < max_len; ++l)
      for (int64_t d = 0; d < dim; ++d) {
        double v = 0.0;
        if (l < len) v = vp[(begin + l) * values.strides[0] + d * values.strides[1]];
        yp[b * out.strides[0] + l * out.strides[1] + d * out.strides[2]] = v;
      }
  }
  return KV_OK;
}
