// Reference rmsnorm: fp64, sum of squares then scale, one row at a time.
#include <cmath>
#include <cstdint>
#include "kevolve/abi.h"

extern "C" int kevolve_kernel(const kv_args* a) {
  const kv_tensor& x = a->inputs[0];
  const kv_tensor& gamma = a->inputs[1];
  const kv_tensor& y = a->outputs[0];
  const int64_t rows = x.dims[0], n = x.dims[1];
  const double eps = kv_param_f(a, 0);
  const double* xp = static_cast<const double*>(x.data);
  const double* gp = static_cast<const double*>(gamma.data);
  double* yp = static_cast<double*>(y.data);
  for (int64_t r = 0; r < rows; ++r) {
    const double* xr = xp + r * x.strides[0];
    double* yr = yp + r * y.strides[0];
    double sq = 0.0;
    for (int64_t i = 0; i < n; ++i) sq += xr[i * x.strides[1]] * xr[i * x.strides[1]];
    const double inv = 1.0 / std::sqrt(sq / static_cast<double>(n) + eps);
    for (int64_t i = 0; i < n; ++i)
      yr[i * y.strides[1]] = xr[i * x.strides[1]] * inv * gp[i * gamma.strides[0]];
  }
  return KV_OK;
}
