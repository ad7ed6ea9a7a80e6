// TRUST row 19: memory that grows with every call and is never freed. The
// results are right, so only the memory limit stops it.
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include "kevolve/abi.h"

extern "C" int kevolve_kernel(const kv_args* a) {
  const kv_tensor& x = a->inputs[0];
  const int64_t rows = x.dims[0], n = x.dims[1];
  const float* xp = static_cast<const float*>(x.data);
  float* yp = static_cast<float*>(a->outputs[0].data);
  for (int64_t r = 0; r < rows; ++r) {
    float m = -INFINITY, s = 0.f;
    for (int64_t i = 0; i < n; ++i) m = std::fmax(m, xp[r * n + i]);
    for (int64_t i = 0; i < n; ++i) s += std::exp(xp[r * n + i] - m);
    for (int64_t i = 0; i < n; ++i) yp[r * n + i] = std::exp(xp[r * n + i] - m) / s;
  }
  const size_t chunk = size_t(512) << 20;
  volatile char* p = static_cast<volatile char*>(std::malloc(chunk));
  p[0] = 1;  // NULL once the address-space limit is reached: a crash
  p[chunk - 1] = 1;
  return KV_OK;
}
