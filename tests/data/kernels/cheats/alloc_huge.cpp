// Allocation far beyond the memory limit.
#include <cstddef>
#include <new>
#include "kevolve/abi.h"

extern "C" int kevolve_kernel(const kv_args*) {
  const size_t huge = size_t(64) << 30;
  volatile char* p = new char[huge];  // std::bad_alloc under the limit: terminate
  p[0] = 1;
  p[huge - 1] = 2;
  return p[0] + p[huge - 1] == 3 ? KV_OK : KV_ERR_INTERNAL;
}
