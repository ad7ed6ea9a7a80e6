// Baseline layernorm: what a competent engineer writes without tuning. Three
// passes per row (mean, centred variance, normalize) in fp32 with std::sqrt,
// OpenMP over rows; bf16 is converted element by element. The dtype is a
// template parameter, so the element loops hold no dtype branch (gcc if-converts
// such a branch into masked loads that reach past the bf16 buffer: ~30x slower).
#include <cmath>
#include <cstdint>
#include "kevolve/abi.h"

namespace {
template <bool kBf16>
inline float load(const kv_tensor& t, int64_t i) {
  if constexpr (kBf16) return kv_bf16_to_f32(static_cast<const uint16_t*>(t.data)[i]);
  else return static_cast<const float*>(t.data)[i];
}
template <bool kBf16>
inline void store(const kv_tensor& t, int64_t i, float v) {
  if constexpr (kBf16) static_cast<uint16_t*>(t.data)[i] = kv_f32_to_bf16(v);
  else static_cast<float*>(t.data)[i] = v;
}

template <bool kBf16>
void run(const kv_args* a) {
  const kv_tensor& x = a->inputs[0];
  const kv_tensor& gamma = a->inputs[1];
  const kv_tensor& beta = a->inputs[2];
  const kv_tensor& y = a->outputs[0];
  const int64_t rows = x.dims[0], n = x.dims[1];
  const float eps = static_cast<float>(kv_param_f(a, 0));
#pragma omp parallel for num_threads(a->num_threads)
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t xo = r * x.strides[0], yo = r * y.strides[0];
    float sum = 0.f;
    for (int64_t i = 0; i < n; ++i) sum += load<kBf16>(x, xo + i);
    const float mean = sum / static_cast<float>(n);
    float sq = 0.f;
    for (int64_t i = 0; i < n; ++i) {
      const float d = load<kBf16>(x, xo + i) - mean;
      sq += d * d;
    }
    const float inv = 1.f / std::sqrt(sq / static_cast<float>(n) + eps);
    for (int64_t i = 0; i < n; ++i)
      store<kBf16>(y, yo + i,
                   (load<kBf16>(x, xo + i) - mean) * inv * load<kBf16>(gamma, i) +
                       load<kBf16>(beta, i));
  }
}
}  // namespace

extern "C" int kevolve_kernel(const kv_args* a) {
  const int32_t dt = a->inputs[0].dtype;
  if (dt == KV_F32) run<false>(a);
  else if (dt == KV_BF16) run<true>(a);
  else return KV_ERR_UNSUPPORTED;
  return KV_OK;
}
