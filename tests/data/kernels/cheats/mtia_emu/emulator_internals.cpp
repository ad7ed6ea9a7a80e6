// mtia_emu: reach the emulator behind the device handle (its implementation
// pointer leads to device memory and the cycle counter). Refused statically.
#include <kevolve/abi.h>
#include <kevolve/mtia.h>

extern "C" int kevolve_kernel(const kv_args*, kv_mtia_device* dev) {
  void* emulator = dev->impl;
  return emulator ? 0 : 1;
}
