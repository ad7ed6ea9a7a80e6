// Baseline bucketize: what a competent engineer writes without tuning.
// std::lower_bound per element, OpenMP over elements.
#include <algorithm>
#include <cstdint>
#include "kevolve/abi.h"

extern "C" int kevolve_kernel(const kv_args* a) {
  const kv_tensor& x = a->inputs[0];
  const kv_tensor& bnd = a->inputs[1];
  const kv_tensor& out = a->outputs[0];
  const int64_t n = x.dims[0], nb = bnd.dims[0];
  const float* xp = static_cast<const float*>(x.data);
  const float* bp = static_cast<const float*>(bnd.data);
  int32_t* yp = static_cast<int32_t*>(out.data);
#pragma omp parallel for num_threads(a->num_threads)
  for (int64_t i = 0; i < n; ++i)
    yp[i] = static_cast<int32_t>(std::lower_bound(bp, bp + nb, xp[i]) - bp);
  return KV_OK;
}
