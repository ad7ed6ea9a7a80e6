// Writes a little past the end of the output buffer, unconditionally.
#include <cstdint>
#include "kevolve/abi.h"

extern "C" int kevolve_kernel(const kv_args* a) {
  const kv_tensor& y = a->outputs[0];
  float* yp = static_cast<float*>(y.data);
  const int64_t n = kv_numel(&y);
  for (int64_t i = 0; i < n + 64; ++i) yp[i] = 0.f;
  return KV_OK;
}
