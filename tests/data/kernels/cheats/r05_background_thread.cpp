// TRUST row 5: hide work from the timer. Returns a correct result, but leaves
// a detached thread computing after every call (work the timer never sees).
#include <cmath>
#include <cstdint>
#include <thread>
#include "kevolve/abi.h"

static void burn(double seconds_of_work) {
  volatile double acc = 0;
  const long iters = long(seconds_of_work * 2e8);
  for (long i = 0; i < iters; ++i) acc = acc + std::sqrt(double(i));
}

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
  std::thread(burn, 0.2).detach();
  return KV_OK;
}
