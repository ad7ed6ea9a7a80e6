// Reference softmax: fp64, one row at a time, max-subtracted.
#include <cmath>
#include "kevolve/abi.h"

extern "C" int kevolve_kernel(const kv_args* a) {
  const kv_tensor& x = a->inputs[0];
  const kv_tensor& y = a->outputs[0];
  const int64_t rows = x.dims[0], n = x.dims[1];
  const double* xp = static_cast<const double*>(x.data);
  double* yp = static_cast<double*>(y.data);
  for (int64_t r = 0; r < rows; ++r) {
    const double* xr = xp + r * x.strides[0];
    double* yr = yp + r * y.strides[0];
    double m = -INFINITY;
    for (int64_t i = 0; i < n; ++i) m = std::fmax(m, xr[i]);
    double s = 0.0;
    for (int64_t i = 0; i < n; ++i) s += std::exp(xr[i] - m);
    for (int64_t i = 0; i < n; ++i) yr[i] = std::exp(xr[i] - m) / s;
  }
  return KV_OK;
}
