// Crash: abort() in the middle of a call.
#include <cstdlib>
#include "kevolve/abi.h"

extern "C" int kevolve_kernel(const kv_args*) {
  std::abort();
}
