// Reference embedding_bag_sum: fp64, one bag at a time, in index order.
#include <cstdint>
#include "kevolve/abi.h"

extern "C" int kevolve_kernel(const kv_args* a) {
  const kv_tensor& table = a->inputs[0];
  const kv_tensor& indices = a->inputs[1];
  const kv_tensor& offsets = a->inputs[2];
  const kv_tensor& out = a->outputs[0];
  const int64_t nbags = out.dims[0], dim = out.dims[1];
  const double* tp = static_cast<const double*>(table.data);
  const int64_t* ip = static_cast<const int64_t*>(indices.data);
  const int64_t* op = static_cast<const int64_t*>(offsets.data);
  double* yp = static_cast<double*>(out.data);
  for (int64_t b = 0; b < nbags; ++b) {
    const int64_t begin = op[b * offsets.strides[0]];
    const int64_t end = op[(b + 1) * offsets.strides[0]];
    for (int64_t d = 0; d < dim; ++d) {
      double s = 0.0;
      for (int64_t k = begin; k < end; ++k) {
        const int64_t row = ip[k * indices.strides[0]];
        s += tp[row * table.strides[0] + d * table.strides[1]];
      }
      yp[b * out.strides[0] + d * out.strides[1]] = s;
    }
  }
  return KV_OK;
}
