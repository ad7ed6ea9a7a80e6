// Reference dot_interaction: out[b, i*(i-1)/2 + j] = <x[b,i,:], x[b,j,:]> for j < i, fp64.
#include <cstdint>
#include "kevolve/abi.h"

extern "C" int kevolve_kernel(const kv_args* a) {
  const kv_tensor& x = a->inputs[0];
  const kv_tensor& out = a->outputs[0];
  const int64_t nb = x.dims[0], nf = x.dims[1], dim = x.dims[2];
  const double* xp = static_cast<const double*>(x.data);
  double* yp = static_cast<double*>(out.data);
  for (int64_t b = 0; b < nb; ++b)
    for (int64_t i = 1; i < nf; ++i)
      for (int64_t j = 0; j < i; ++j) {
        double s = 0.0;
        for (int64_t d = 0; d < dim; ++d)
          s += xp[b * x.strides[0] + i * x.strides[1] + d * x.strides[2]] *
               xp[b * x.strides[0] + j * x.strides[1] + d * x.strides[2]];
        yp[b * out.strides[0] + (i * (i - 1) / 2 + j) * out.strides[1]] = s;
      }
  return KV_OK;
}
