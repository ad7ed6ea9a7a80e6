// Crash: a null-pointer write.
#include "kevolve/abi.h"

extern "C" int kevolve_kernel(const kv_args* a) {
  volatile float* p = nullptr;
  *p = float(a->num_threads);
  return KV_OK;
}
