// A reference that g++ rejects: `kevolve ops validate` must say so, exit 2
// and leave nothing behind (no cache entry, no object file).
#include "kevolve/abi.h"

extern "C" int kevolve_kernel(const kv_args* a) {
  const kv_tensor& x = a->inputs[0]
  return this_is_not_declared(x);
}
