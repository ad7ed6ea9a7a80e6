// Baseline softmax(3 tanh(x)) over rows: fp32 math, three passes per row,
// OpenMP over rows.
#include <cmath>
#include <cstdint>
#include "kevolve/abi.h"

namespace {
inline float load(const kv_tensor& t, int64_t i) {
  if (t.dtype == KV_F32) return static_cast<const float*>(t.data)[i];
  return kv_bf16_to_f32(static_cast<const uint16_t*>(t.data)[i]);
}
inline void store(const kv_tensor& t, int64_t i, float v) {
  if (t.dtype == KV_F32) static_cast<float*>(t.data)[i] = v;
  else static_cast<uint16_t*>(t.data)[i] = kv_f32_to_bf16(v);
}
}  // namespace

extern "C" int kevolve_kernel(const kv_args* a) {
  const kv_tensor& x = a->inputs[0];
  const kv_tensor& y = a->outputs[0];
  const int64_t rows = x.dims[0], n = x.dims[1];
#pragma omp parallel for num_threads(a->num_threads) schedule(static)
  for (int64_t r = 0; r < rows; ++r) {
    float m = -INFINITY, s = 0.f;
    for (int64_t i = 0; i < n; ++i) m = std::fmax(m, 3.f * std::tanh(load(x, r * n + i)));
    for (int64_t i = 0; i < n; ++i) s += std::exp(3.f * std::tanh(load(x, r * n + i)) - m);
    for (int64_t i = 0; i < n; ++i) store(y, r * n + i, std::exp(3.f * std::tanh(load(x, r * n + i)) - m) / s);
  }
  return KV_OK;
}
