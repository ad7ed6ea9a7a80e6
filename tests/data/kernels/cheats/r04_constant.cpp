// TRUST row 4: a constant output (the mean of a softmax row) that is right
// on average and passes a check that only looks at sums.
#include <cstdint>
#include "kevolve/abi.h"

extern "C" int kevolve_kernel(const kv_args* a) {
  const kv_tensor& y = a->outputs[0];
  float* yp = static_cast<float*>(y.data);
  const float v = 1.0f / float(y.dims[1]);
  for (int64_t i = 0; i < kv_numel(&y); ++i) yp[i] = v;
  return KV_OK;
}
