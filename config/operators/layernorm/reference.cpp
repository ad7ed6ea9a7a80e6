// Reference layernorm: fp64, two passes (mean, then centred variance) per row.
#include <cmath>
#include <cstdint>
#include "kevolve/abi.h"

extern "C" int kevolve_kernel(const kv_args* a) {
  const kv_tensor& x = a->inputs[0];
  const kv_tensor& gamma = a->inputs[1];
  const kv_tensor& beta = a->inputs[2];
  const kv_tensor& y = a->outputs[0];
  const int64_t rows = x.dims[0], n = x.dims[1];
  const double eps = kv_param_f(a, 0);
  const double* xp = static_cast<const double*>(x.data);
  const double* gp = static_cast<const double*>(gamma.data);
  const double* bp = static_cast<const double*>(beta.data);
  double* yp = static_cast<double*>(y.data);
  for (int64_t r = 0; r < rows; ++r) {
    const double* xr = xp + r * x.strides[0];
    double* yr = yp + r * y.strides[0];
    double mean = 0.0;
    for (int64_t i = 0; i < n; ++i) mean += xr[i * x.strides[1]];
    mean /= static_cast<double>(n);
    double var = 0.0;
    for (int64_t i = 0; i < n; ++i) {
      const double d = xr[i * x.strides[1]] - mean;
      var += d * d;
    }
    var /= static_cast<double>(n);
    const double inv = 1.0 / std::sqrt(var + eps);
    for (int64_t i = 0; i < n; ++i)
      yr[i * y.strides[1]] = (xr[i * x.strides[1]] - mean) * inv * gp[i * gamma.strides[0]] +
                             bp[i * beta.strides[0]];
  }
  return KV_OK;
}
