// TRUST row 11: an fp32 softmax whose results are rounded through bfloat16.
#include <cmath>
#include <cstdint>
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
    for (int64_t i = 0; i < n; ++i) yp[r * n + i] = kv_bf16_to_f32(kv_f32_to_bf16(std::exp(xp[r * n + i] - m) / s));
  }
  return KV_OK;
}
