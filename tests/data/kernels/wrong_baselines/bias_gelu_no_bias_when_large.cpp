// A wrong baseline of bias_gelu for the timed-baseline check: right at the
// holdout shapes (which evaluator::create checks), but above 100,000 elements
// it drops the bias, as a baseline tuned only on small shapes might.
#include <cmath>
#include <cstdint>
#include "kevolve/abi.h"

namespace {
template <int DT>
inline float load(const kv_tensor& t, int64_t i) {
  if constexpr (DT == KV_BF16) return kv_bf16_to_f32(static_cast<const uint16_t*>(t.data)[i]);
  else if constexpr (DT == KV_F16) return kv_f16_to_f32(static_cast<const uint16_t*>(t.data)[i]);
  else return static_cast<const float*>(t.data)[i];
}
template <int DT>
inline void store(const kv_tensor& t, int64_t i, float v) {
  if constexpr (DT == KV_BF16) static_cast<uint16_t*>(t.data)[i] = kv_f32_to_bf16(v);
  else if constexpr (DT == KV_F16) static_cast<uint16_t*>(t.data)[i] = kv_f32_to_f16(v);
  else static_cast<float*>(t.data)[i] = v;
}

template <int DT>
void run(const kv_args* a) {
  const kv_tensor& x = a->inputs[0];
  const kv_tensor& bias = a->inputs[1];
  const kv_tensor& y = a->outputs[0];
  const int64_t rows = x.dims[0], n = x.dims[1];
#pragma omp parallel for num_threads(a->num_threads)
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t xo = r * x.strides[0], yo = r * y.strides[0];
    for (int64_t i = 0; i < n; ++i) {
      const float v = load<DT>(x, xo + i) + (rows * n < 100000 ? load<DT>(bias, i) : 0.f);
      store<DT>(y, yo + i, 0.5f * v * (1.f + std::erf(v * 0.70710678f)));
    }
  }
}
}  // namespace

extern "C" int kevolve_kernel(const kv_args* a) {
  switch (a->inputs[0].dtype) {
    case KV_F32: run<KV_F32>(a); return KV_OK;
    case KV_BF16: run<KV_BF16>(a); return KV_OK;
    case KV_F16: run<KV_F16>(a); return KV_OK;
    default: return KV_ERR_UNSUPPORTED;
  }
}
