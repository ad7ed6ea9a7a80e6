// TRUST row 1/14 (mtia_emu): compute on the host, bypassing DMA, by reading
// tensor memory through its pointer. Tensor addresses are device addresses
// (non-canonical on x86-64): the read faults and the kernel is `crashed`.
#include <kevolve/abi.h>
#include <kevolve/mtia.h>

extern "C" int kevolve_kernel(const kv_args* a, kv_mtia_device*) {
  const float* x = static_cast<const float*>(a->inputs[0].data);
  float* y = static_cast<float*>(a->outputs[0].data);
  for (int64_t i = 0; i < kv_numel(&a->inputs[0]); ++i) y[i] = x[i] > 0 ? x[i] : 0.0f;
  return 0;
}
