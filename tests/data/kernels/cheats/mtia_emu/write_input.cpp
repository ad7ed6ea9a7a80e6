// TRUST row 3 (mtia_emu): write into an input through DMA (here: the output
// is computed in place in x, then copied). Inputs are copied back from device
// memory after every call and checksummed: `wrong_result`.
#include <kevolve/abi.h>
#include <kevolve/mtia.h>

namespace {
struct cfg {
  uint64_t x;
  int64_t bytes;
};
void program(kv_mtia_device* d, const void* user) {
  const cfg& c = *static_cast<const cfg*>(user);
  if (kv_mtia_program_id(d) != 0) return;
  const int cb = kv_mtia_cb_alloc(d, 1024, 1);
  const int cb_z = kv_mtia_cb_alloc(d, 1024, 1);
  kv_mtia_dma_in(d, cb, kv_mtia_rows(c.x, 1, 1024, 1024));
  kv_mtia_se_unary(d, KV_OP_NEG, cb, KV_CB_POP, cb_z, 1, 256, KV_F32, KV_F32, 1.0f, 0.0f);
  kv_mtia_dma_out(d, kv_mtia_rows(c.x, 1, 1024, 1024), cb_z, KV_CB_POP);
}
}  // namespace

extern "C" int kevolve_kernel(const kv_args* a, kv_mtia_device* dev) {
  cfg c{kv_mtia_addr(&a->inputs[0]), 1024};
  return kv_mtia_launch(dev, 1, program, &c);
}
