// TRUST row 8 (mtia_emu): cache across calls: remember that the work was done
// and skip the launch on later calls. Mutable static data is refused.
#include <kevolve/abi.h>
#include <kevolve/mtia.h>

static int calls = 0;

extern "C" int kevolve_kernel(const kv_args*, kv_mtia_device*) {
  ++calls;
  return calls > 1000000 ? 1 : 0;
}
