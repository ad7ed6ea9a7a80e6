// TRUST row 15: NaN everywhere: every comparison with NaN is false, so a
// check written as "if (err > tol) fail" passes.
#include <cmath>
#include <cstdint>
#include "kevolve/abi.h"

extern "C" int kevolve_kernel(const kv_args* a) {
  const kv_tensor& y = a->outputs[0];
  float* yp = static_cast<float*>(y.data);
  for (int64_t i = 0; i < kv_numel(&y); ++i) yp[i] = NAN;
  return KV_OK;
}
