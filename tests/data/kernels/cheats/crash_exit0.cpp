// Crash: exit(0) in the middle of a call: a clean exit code must not pass.
#include <cstdlib>
#include "kevolve/abi.h"

extern "C" int kevolve_kernel(const kv_args*) {
  std::exit(0);
}
