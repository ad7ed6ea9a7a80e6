// Writes 16 KiB past the end of the output buffer, into the guard page.
#include <cstdint>
#include "kevolve/abi.h"

extern "C" int kevolve_kernel(const kv_args* a) {
  const kv_tensor& y = a->outputs[0];
  float* yp = static_cast<float*>(y.data);
  const int64_t n = kv_numel(&y);
  for (int64_t i = 0; i < n + 4096; ++i) yp[i] = 0.f;  // 16 KiB: past any page tail
  return KV_OK;
}
