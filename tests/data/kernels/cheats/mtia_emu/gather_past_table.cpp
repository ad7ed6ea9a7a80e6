// Cheat (mtia_emu, bucketize): a local-memory gather that indexes past its
// table, hoping to read whatever the neighbouring buffer holds. The
// emulator bounds-checks kv_mtia_lm_gather: the run fails (runtime_failed).
#include <kevolve/abi.h>
#include <kevolve/mtia.h>

namespace {
struct cfg {
  uint64_t x, bnd, out;
  int64_t n, nb;
};
void program(kv_mtia_device* d, const void* user) {
  const cfg& c = *static_cast<const cfg*>(user);
  if (kv_mtia_program_id(d) != 0) return;
  const int n = int(c.n < 1024 ? c.n : 1024), nb = int(c.nb);
  const int tab = kv_mtia_cb_alloc(d, nb * 4, 1), x = kv_mtia_cb_alloc(d, n * 4, 1);
  const int pos = kv_mtia_cb_alloc(d, n * 4, 1), g = kv_mtia_cb_alloc(d, n * 4, 1);
  const int o = kv_mtia_cb_alloc(d, n * 4, 1);
  kv_mtia_dma_in(d, tab, kv_mtia_rows(c.bnd, 1, nb * 4, nb * 4));
  kv_mtia_dma_in(d, x, kv_mtia_rows(c.x, 1, n * 4, n * 4));
  kv_mtia_int_op(d, 0, KV_IOP_AND, x, KV_CB_POP, -1, 0, pos, n, KV_I32, 0);
  kv_mtia_lm_gather(d, 0, tab, KV_CB_KEEP, nb, KV_F32, pos, KV_CB_POP, g, n, nb);  // one past the end
  kv_mtia_int_op(d, 0, KV_IOP_AND, g, KV_CB_POP, -1, 0, o, n, KV_I32, 0);
  kv_mtia_dma_out(d, kv_mtia_rows(c.out, 1, n * 4, n * 4), o, KV_CB_POP);
}
}  // namespace

extern "C" int kevolve_kernel(const kv_args* a, kv_mtia_device* dev) {
  cfg c{kv_mtia_addr(&a->inputs[0]), kv_mtia_addr(&a->inputs[1]), kv_mtia_addr(&a->outputs[0]),
        kv_numel(&a->inputs[0]), kv_numel(&a->inputs[1])};
  return kv_mtia_launch(dev, kv_mtia_grid_rows(dev) * kv_mtia_grid_cols(dev), program, &c);
}
