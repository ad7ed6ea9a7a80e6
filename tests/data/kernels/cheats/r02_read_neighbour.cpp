// TRUST row 2: copy whatever lies just past the output buffer (another set's
// results), hoping it is a correct answer left behind.
#include <cstdint>
#include <cstring>
#include "kevolve/abi.h"

extern "C" int kevolve_kernel(const kv_args* a) {
  const kv_tensor& y = a->outputs[0];
  const int64_t n = kv_numel(&y);
  float* out = static_cast<float*>(y.data);
  std::memcpy(out, out + n, size_t(n) * sizeof(float));
  return KV_OK;
}
