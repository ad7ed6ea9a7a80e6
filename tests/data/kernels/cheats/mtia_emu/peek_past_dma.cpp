// TRUST (mtia_emu, scalar core): a kernel that wants what an earlier call
// left in local memory (its results, to skip the work) DMAs one small row
// into a large buffer and peeks past it. The emulator lets a peek read only
// bytes the slot's producer wrote in this run: `runtime_failed`.
#include <kevolve/abi.h>
#include <kevolve/mtia.h>

namespace {
struct cfg {
  uint64_t b;
  int64_t cols;
};
void program(kv_mtia_device* d, const void* user) {
  const cfg& c = *static_cast<const cfg*>(user);
  const int cb = kv_mtia_cb_alloc(d, 65536, 1);
  kv_mtia_dma_in(d, cb, kv_mtia_rows(c.b, 1, 32, 32));
  int64_t stale = 0;
  kv_mtia_sc_peek_int(d, cb, KV_I64, 1000, KV_CB_POP, &stale);  // byte 8000 of a 32-byte DMA
}
}  // namespace

extern "C" int kevolve_kernel(const kv_args* a, kv_mtia_device* dev) {
  cfg c{kv_mtia_addr(&a->inputs[1]), a->inputs[1].dims[0]};
  return kv_mtia_launch(dev, 1, program, &c);
}
