// mtia_emu: call or patch the emulator's function table directly instead of
// the kv_mtia_* intrinsics (e.g. to swap the launch for a no-op). Refused statically.
#include <kevolve/abi.h>
#include <kevolve/mtia.h>

extern "C" int kevolve_kernel(const kv_args*, kv_mtia_device* dev) {
  kv_mtia_api* table = const_cast<kv_mtia_api*>(dev->api);
  table->launch = nullptr;
  return 0;
}
