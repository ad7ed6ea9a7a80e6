// Baseline softmax: what a competent engineer writes without tuning.
#include <cmath>
#include <cstdint>
#include "kevolve/abi.h"

namespace {
inline float load(const kv_tensor& t, int64_t i) {
  if (t.dtype == KV_BF16) return kv_bf16_to_f32(static_cast<const uint16_t*>(t.data)[i]);
  return static_cast<const float*>(t.data)[i];
}
inline void store(const kv_tensor& t, int64_t i, float v) {
  if (t.dtype == KV_BF16) static_cast<uint16_t*>(t.data)[i] = kv_f32_to_bf16(v);
  else static_cast<float*>(t.data)[i] = v;
}
}  // namespace

extern "C" int kevolve_kernel(const kv_args* a) {
  const kv_tensor& x = a->inputs[0];
  const kv_tensor& y = a->outputs[0];
  const int64_t rows = x.dims[0], n = x.dims[1];
#pragma omp parallel for num_threads(a->num_threads)
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t xo = r * x.strides[0], yo = r * y.strides[0];
    float m = -INFINITY;
    for (int64_t i = 0; i < n; ++i) m = std::fmax(m, load(x, xo + i));
    float s = 0.f;
    for (int64_t i = 0; i < n; ++i) s += std::exp(load(x, xo + i) - m);
    const float inv = 1.f / s;
    for (int64_t i = 0; i < n; ++i) store(y, yo + i, std::exp(load(x, xo + i) - m) * inv);
  }
  return KV_OK;
}
