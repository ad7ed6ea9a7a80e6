// Reference sequence_truncate: keep the last min(len_b, K) rows of every sequence,
// packed; the rest of out_values is zero. fp64.
#include <cstdint>
#include "kevolve/abi.h"

extern "C" int kevolve_kernel(const kv_args* a) {
  const kv_tensor& values = a->inputs[0];
  const kv_tensor& offsets = a->inputs[1];
  const kv_tensor& out_offsets = a->outputs[0];
  const kv_tensor& out_values = a->outputs[1];
  const int64_t nseq = offsets.dims[0] - 1;
  const int64_t keep = kv_param_i(a, 0);
  const int64_t rows = out_values.dims[0], dim = out_values.dims[1];
  const double* vp = static_cast<const double*>(values.data);
  const int64_t* op = static_cast<const int64_t*>(offsets.data);
  int64_t* oo = static_cast<int64_t*>(out_offsets.data);
  double* yp = static_cast<double*>(out_values.data);
  int64_t row = 0;  // next output row
  oo[0] = 0;
  for (int64_t b = 0; b < nseq; ++b) {
    const int64_t end = op[(b + 1) * offsets.strides[0]];
    const int64_t len = end - op[b * offsets.strides[0]];
    const int64_t n = len < keep ? len : keep;
    for (int64_t r = 0; r < n; ++r, ++row)
      for (int64_t d = 0; d < dim; ++d)
        yp[row * out_values.strides[0] + d * out_values.strides[1]] =
            vp[(end - n + r) * values.strides[0] + d * values.strides[1]];
    oo[(b + 1) * out_offsets.strides[0]] = row;
  }
  for (; row < rows; ++row)
    for (int64_t d = 0; d < dim; ++d) yp[row * out_values.strides[0] + d * out_values.strides[1]] = 0.0;
  return KV_OK;
}
