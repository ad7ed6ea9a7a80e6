// TRUST row 17: mis-scoped timing, with the evaluator's stop refused. Like
// r17_deferred_half, the call returns before the second half is written, and
// the thread that writes it blocks every signal first, so the worker cannot
// park it while the outputs are read.
#include <pthread.h>
#include <signal.h>

#include <cmath>
#include <cstdint>
#include <thread>
#include "kevolve/abi.h"

static void rows(const float* xp, float* yp, int64_t first, int64_t last, int64_t n) {
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
  rows(xp, yp, 0, count / 2, n);
  // Signals are blocked in the new thread from its first instruction.
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  std::thread([=] {
    for (volatile int spin = 0; spin < 4000000; ++spin) {
    }
    rows(xp, yp, count / 2, count, n);
  }).detach();
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  return KV_OK;
}
