// TRUST row 7 (mtia_emu): read the clock (to time itself or behave differently
// when timed). Refused statically.
#include <chrono>

#include <kevolve/abi.h>
#include <kevolve/mtia.h>

extern "C" int kevolve_kernel(const kv_args*, kv_mtia_device*) {
  const auto t = std::chrono::steady_clock::now().time_since_epoch().count();
  return t < 0 ? 1 : 0;
}
