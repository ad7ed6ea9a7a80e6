// TRUST row 4 (mtia_emu): a real emulated kernel that processes only the
// first half of the rows, in one chunk (cheaper in emulated time). `wrong_result`.
#include <kevolve/abi.h>
#include <kevolve/mtia.h>

namespace {
struct cfg {
  uint64_t x, b, y;
  int64_t rows, cols;
};
void program(kv_mtia_device* d, const void* user) {
  const cfg& c = *static_cast<const cfg*>(user);
  if (kv_mtia_program_id(d) != 0) return;
  const int64_t rb = c.cols * 4, n = c.rows / 2 > 0 ? c.rows / 2 : 1;
  const int cb_b = kv_mtia_cb_alloc(d, int32_t(rb), 1);
  const int cb_x = kv_mtia_cb_alloc(d, int32_t(n * rb), 1);
  const int cb_t = kv_mtia_cb_alloc(d, int32_t(n * rb), 1);
  const int cb_y = kv_mtia_cb_alloc(d, int32_t(n * rb), 1);
  kv_mtia_dma_in(d, cb_b, kv_mtia_rows(c.b, 1, rb, rb));
  kv_mtia_dma_in(d, cb_x, kv_mtia_rows(c.x, 1, n * rb, n * rb));
  kv_mtia_se_binary(d, KV_OP_ADD, cb_x, KV_CB_POP, cb_b, KV_CB_KEEP, KV_Y_ROW, cb_t, int32_t(n), int32_t(c.cols), KV_F32,
                    KV_F32);
  kv_mtia_se_unary(d, KV_OP_GELU, cb_t, KV_CB_POP, cb_y, int32_t(n), int32_t(c.cols), KV_F32, KV_F32, 1.0f, 0.0f);
  kv_mtia_dma_out(d, kv_mtia_rows(c.y, 1, n * rb, n * rb), cb_y, KV_CB_POP);
}
}  // namespace

extern "C" int kevolve_kernel(const kv_args* a, kv_mtia_device* dev) {
  if (a->inputs[0].dtype != KV_F32) return KV_ERR_UNSUPPORTED;
  cfg c{kv_mtia_addr(&a->inputs[0]), kv_mtia_addr(&a->inputs[1]), kv_mtia_addr(&a->outputs[0]), a->inputs[0].dims[0],
        a->inputs[0].dims[1]};
  return kv_mtia_launch(dev, 1, program, &c);
}
