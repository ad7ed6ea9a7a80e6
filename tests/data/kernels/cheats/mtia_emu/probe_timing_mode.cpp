// TRUST (mtia_emu, timing-only runs): timed calls but the last run without
// arithmetic, and a peek cannot be answered then. A kernel that probes with
// a peek and skips its work when the probe fails would be timed on almost no
// commands. The emulator makes the failed probe end the run and the worker
// repeats such a kernel's calls in full: `ok`, timed on all of its work (one
// PE: slower than the 64-PE baseline).
#include <kevolve/abi.h>
#include <kevolve/mtia.h>

namespace {
struct cfg {
  uint64_t x, b, y;
  int64_t rows, cols;
};
void program(kv_mtia_device* d, const void* user) {
  const cfg& c = *static_cast<const cfg*>(user);
  const int64_t rb = c.cols * 4, step = 8;  // 8 rows keep every chunk 32-byte aligned
  const int cb_b = kv_mtia_cb_alloc(d, int32_t(rb), 1);
  const int cb_x = kv_mtia_cb_alloc(d, int32_t(step * rb), 2);
  const int cb_t = kv_mtia_cb_alloc(d, int32_t(step * rb), 2);
  const int cb_y = kv_mtia_cb_alloc(d, int32_t(step * rb), 2);
  kv_mtia_dma_in(d, cb_b, kv_mtia_rows(c.b, 1, rb, rb));
  int64_t probe = 0;
  if (kv_mtia_sc_peek_int(d, cb_b, KV_I32, 0, KV_CB_KEEP, &probe) != KV_MTIA_OK) return;  // "timing-only": skip
  for (int64_t r = 0; r < c.rows; r += step) {
    const int64_t n = c.rows - r < step ? c.rows - r : step;
    kv_mtia_dma_in(d, cb_x, kv_mtia_rows(c.x + uint64_t(r * rb), 1, n * rb, n * rb));
    kv_mtia_se_binary(d, KV_OP_ADD, cb_x, KV_CB_POP, cb_b, KV_CB_KEEP, KV_Y_ROW, cb_t, int32_t(n), int32_t(c.cols),
                      KV_F32, KV_F32);
    kv_mtia_se_unary(d, KV_OP_GELU, cb_t, KV_CB_POP, cb_y, int32_t(n), int32_t(c.cols), KV_F32, KV_F32, 1.0f, 0.0f);
    kv_mtia_dma_out(d, kv_mtia_rows(c.y + uint64_t(r * rb), 1, n * rb, n * rb), cb_y, KV_CB_POP);
  }
}
}  // namespace

extern "C" int kevolve_kernel(const kv_args* a, kv_mtia_device* dev) {
  if (a->inputs[0].dtype != KV_F32) return KV_ERR_UNSUPPORTED;
  cfg c{kv_mtia_addr(&a->inputs[0]), kv_mtia_addr(&a->inputs[1]), kv_mtia_addr(&a->outputs[0]), a->inputs[0].dims[0],
        a->inputs[0].dims[1]};
  return kv_mtia_launch(dev, 1, program, &c);
}
