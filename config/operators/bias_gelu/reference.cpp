// Reference bias_gelu: fp64, v = x + bias, y = 0.5 v (1 + erf(v / sqrt(2))).
#include <cmath>
#include <cstdint>
#include "kevolve/abi.h"

extern "C" int kevolve_kernel(const kv_args* a) {
  const kv_tensor& x = a->inputs[0];
  const kv_tensor& bias = a->inputs[1];
  const kv_tensor& y = a->outputs[0];
  const int64_t rows = x.dims[0], n = x.dims[1];
  const double* xp = static_cast<const double*>(x.data);
  const double* bp = static_cast<const double*>(bias.data);
  double* yp = static_cast<double*>(y.data);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t i = 0; i < n; ++i) {
      const double v = xp[r * x.strides[0] + i * x.strides[1]] + bp[i * bias.strides[0]];
      yp[r * y.strides[0] + i * y.strides[1]] = 0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0)));
    }
  return KV_OK;
}
