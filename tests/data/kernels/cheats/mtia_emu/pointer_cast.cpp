// mtia_emu: turn a device address into a host pointer by reinterpretation.
// Refused statically (and it would fault).
#include <stdint.h>

#include <kevolve/abi.h>
#include <kevolve/mtia.h>

extern "C" int kevolve_kernel(const kv_args* a, kv_mtia_device*) {
  const float* x = reinterpret_cast<const float*>(kv_mtia_addr(&a->inputs[0]));
  return x ? 0 : 1;
}
