// TRUST row 17: mis-scoped timing. The call returns after launching the
// second half of its work, which finishes outside the timed region (the
// thread first waits a little, as work queued behind other work would: on
// small shapes an immediate thread could finish before anyone looks, when it
// would not matter either).
#include <cmath>
#include <cstdint>
#include <thread>
#include "kevolve/abi.h"

static void rows(const float* xp, float* yp, int64_t first, int64_t last, int64_t n, bool later) {
  if (later)
    for (volatile int spin = 0; spin < 4000000; ++spin) {
    }
  for (int64_t r = first; r < last; ++r) {
    float m = -INFINITY, s = 0.f;
    for (int64_t i = 0; i < n; ++i) m = std::fmax(m, xp[r * n + i]);
    for (int64_t i = 0; i < n; ++i) s += std::exp(xp[r * n + i] - m);
    for (int64_t i = 0; i < n; ++i) yp[r * n + i] = std::exp(xp[r * n + i] - m) / s;
  }
}

extern "C" int kevolve_kernel(const kv_args* a) {
  const kv_tensor& x = a->inputs[0];
  const int64_t count = x.dims[0], n = x.dims[1];
  const float* xp = static_cast<const float*>(x.data);
  float* yp = static_cast<float*>(a->outputs[0].data);
  rows(xp, yp, 0, count / 2, n, false);
  std::thread(rows, xp, yp, count / 2, count, n, true).detach();
  return KV_OK;
}
