// Baseline dot_interaction: what a competent engineer writes without tuning.
// One fp32 dot product per pair (j < i), vectorized with omp simd, OpenMP over samples;
// the dtype is a template parameter so that the inner loop is branch-free.
#include <cstdint>
#include "kevolve/abi.h"

namespace {
template <bool BF16>
inline float load(const void* p, int64_t i) {
  if (BF16) return kv_bf16_to_f32(static_cast<const uint16_t*>(p)[i]);
  return static_cast<const float*>(p)[i];
}

template <bool BF16>
void run(const kv_args* a) {
  const kv_tensor& x = a->inputs[0];
  const kv_tensor& out = a->outputs[0];
  const int64_t nb = x.dims[0], nf = x.dims[1], dim = x.dims[2];
  const void* xp = x.data;
#pragma omp parallel for num_threads(a->num_threads)
  for (int64_t b = 0; b < nb; ++b) {
    const int64_t xb = b * x.strides[0], yb = b * out.strides[0];
    for (int64_t i = 1; i < nf; ++i)
      for (int64_t j = 0; j < i; ++j) {
        const int64_t xi = xb + i * x.strides[1], xj = xb + j * x.strides[1];
        float s = 0.f;
#pragma omp simd reduction(+ : s)
        for (int64_t d = 0; d < dim; ++d) s += load<BF16>(xp, xi + d) * load<BF16>(xp, xj + d);
        const int64_t o = yb + i * (i - 1) / 2 + j;
        if (BF16) static_cast<uint16_t*>(out.data)[o] = kv_f32_to_bf16(s);
        else static_cast<float*>(out.data)[o] = s;
      }
  }
}
}  // namespace

extern "C" int kevolve_kernel(const kv_args* a) {
  if (a->inputs[0].dtype == KV_BF16) run<true>(a);
  else run<false>(a);
  return KV_OK;
}
