// Reference SiLU: fp64, y = x / (1 + exp(-x)).
#include <cmath>
#include <cstdint>
#include "kevolve/abi.h"

extern "C" int kevolve_kernel(const kv_args* a) {
  const kv_tensor& x = a->inputs[0];
  const kv_tensor& y = a->outputs[0];
  const double* xp = static_cast<const double*>(x.data);
  double* yp = static_cast<double*>(y.data);
  for (int64_t i = 0; i < x.dims[0]; ++i)
    yp[i * y.strides[0]] = xp[i * x.strides[0]] / (1.0 + std::exp(-xp[i * x.strides[0]]));
  return KV_OK;
}
