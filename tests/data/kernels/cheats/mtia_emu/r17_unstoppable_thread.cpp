// TRUST row 17 (mtia_emu): mis-scoped timing, with the evaluator's stop
// refused. Like r17_deferred_half.cpp here, the call returns before the
// second half is launched, and the thread that launches it blocks every
// signal first, so the worker cannot park it: `suspicious`.
#include <pthread.h>
#include <signal.h>

#include <kevolve/abi.h>
#include <kevolve/mtia.h>

#include <thread>

namespace {
// Rows [first, last) of y = gelu(x + bias), fp32, on PE 0 in chunks of 8 rows
// (8 fp32 rows are a multiple of 32 bytes at any width, so every DMA is aligned).
struct band {
  uint64_t x, b, y;
  int64_t first, last, cols;
};
void program(kv_mtia_device* d, const void* user) {
  const band& c = *static_cast<const band*>(user);
  if (kv_mtia_program_id(d) != 0) return;
  const int64_t rb = c.cols * 4, chunk = 8;
  const int cb_b = kv_mtia_cb_alloc(d, int32_t(rb), 1);
  const int cb_x = kv_mtia_cb_alloc(d, int32_t(chunk * rb), 1);
  const int cb_t = kv_mtia_cb_alloc(d, int32_t(chunk * rb), 1);
  const int cb_y = kv_mtia_cb_alloc(d, int32_t(chunk * rb), 1);
  kv_mtia_dma_in(d, cb_b, kv_mtia_rows(c.b, 1, rb, rb));
  for (int64_t r = c.first; r < c.last; r += chunk) {
    const int64_t n = c.last - r < chunk ? c.last - r : chunk, bytes = n * rb;
    kv_mtia_dma_in(d, cb_x, kv_mtia_rows(c.x + uint64_t(r * rb), 1, bytes, bytes));
    kv_mtia_se_binary(d, KV_OP_ADD, cb_x, KV_CB_POP, cb_b, KV_CB_KEEP, KV_Y_ROW, cb_t, int32_t(n), int32_t(c.cols),
                      KV_F32, KV_F32);
    kv_mtia_se_unary(d, KV_OP_GELU, cb_t, KV_CB_POP, cb_y, int32_t(n), int32_t(c.cols), KV_F32, KV_F32, 1.0f, 0.0f);
    kv_mtia_dma_out(d, kv_mtia_rows(c.y + uint64_t(r * rb), 1, bytes, bytes), cb_y, KV_CB_POP);
  }
}
}  // namespace

extern "C" int kevolve_kernel(const kv_args* a, kv_mtia_device* dev) {
  if (a->inputs[0].dtype != KV_F32) return KV_ERR_UNSUPPORTED;
  const int64_t rows = a->inputs[0].dims[0], half = rows / 2 / 8 * 8;
  const band first{kv_mtia_addr(&a->inputs[0]), kv_mtia_addr(&a->inputs[1]), kv_mtia_addr(&a->outputs[0]), 0, half,
                   a->inputs[0].dims[1]};
  const int rc = half > 0 ? kv_mtia_launch(dev, 1, program, &first) : KV_OK;
  band second = first;
  second.first = half;
  second.last = rows;
  // Signals are blocked in the new thread from its first instruction. The
  // emulator serves one thread at a time: the thread waits long enough for
  // the call to have ended before it launches.
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  std::thread([dev, second] {
    for (volatile int spin = 0; spin < 40000000; ++spin) {
    }
    kv_mtia_launch(dev, 1, program, &second);
  }).detach();
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  return rc;
}
