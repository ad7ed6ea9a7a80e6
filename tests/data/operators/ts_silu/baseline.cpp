// Baseline SiLU: scalar std::exp per element in fp32, OpenMP over elements.
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
  const int64_t n = x.dims[0];
#pragma omp parallel for num_threads(a->num_threads) schedule(static)
  for (int64_t i = 0; i < n; ++i) {
    const float v = load(x, i);
    store(y, i, v / (1.f + std::exp(-v)));
  }
  return KV_OK;
}
