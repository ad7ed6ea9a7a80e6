// Reference bucketize: out[i] = #{j : boundaries[j] < x[i]} by a plain binary
// search over the (non-decreasing) boundaries, in fp64.
#include <cstdint>
#include "kevolve/abi.h"

extern "C" int kevolve_kernel(const kv_args* a) {
  const kv_tensor& x = a->inputs[0];
  const kv_tensor& bnd = a->inputs[1];
  const kv_tensor& out = a->outputs[0];
  const int64_t n = x.dims[0], nb = bnd.dims[0];
  const double* xp = static_cast<const double*>(x.data);
  const double* bp = static_cast<const double*>(bnd.data);
  int32_t* yp = static_cast<int32_t*>(out.data);
  for (int64_t i = 0; i < n; ++i) {
    const double v = xp[i * x.strides[0]];
    // invariant: boundaries[0, lo) < v and boundaries[hi, nb) >= v (or v is NaN)
    int64_t lo = 0, hi = nb;
    while (lo < hi) {
      const int64_t mid = lo + (hi - lo) / 2;
      if (bp[mid * bnd.strides[0]] < v) lo = mid + 1;
      else hi = mid;
    }
    yp[i * out.strides[0]] = static_cast<int32_t>(lo);
  }
  return KV_OK;
}
