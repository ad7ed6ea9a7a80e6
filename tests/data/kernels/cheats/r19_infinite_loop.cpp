// TRUST row 19: an evaluation that never ends.
#include "kevolve/abi.h"

extern "C" int kevolve_kernel(const kv_args* a) {
  volatile int64_t spin = 0;
  while (a->num_threads > 0) spin = spin + 1;
  return KV_OK;
}
