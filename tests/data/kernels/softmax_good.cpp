// An honest fp32 softmax used by the trust tests as the control: every
// cheating kernel in cheats/ differs from it in one way.
#include <cmath>
#include <cstdint>
#include "kevolve/abi.h"

static void softmax_row(const float* x, float* y, int64_t n) {
  float m = -INFINITY;
  for (int64_t i = 0; i < n; ++i) m = std::fmax(m, x[i]);
  float s = 0.f;
  for (int64_t i = 0; i < n; ++i) {
    y[i] = std::exp(x[i] - m);
    s += y[i];
  }
  const float inv = 1.f / s;
  for (int64_t i = 0; i < n; ++i) y[i] *= inv;
}

extern "C" int kevolve_kernel(const kv_args* a) {
  const kv_tensor& x = a->inputs[0];
  const kv_tensor& y = a->outputs[0];
  if (x.dtype != KV_F32) return KV_ERR_UNSUPPORTED;
  const int64_t rows = x.dims[0], n = x.dims[1];
#pragma omp parallel for num_threads(a->num_threads)
  for (int64_t r = 0; r < rows; ++r)
    softmax_row(static_cast<const float*>(x.data) + r * n, static_cast<float*>(y.data) + r * n, n);
  return KV_OK;
}
