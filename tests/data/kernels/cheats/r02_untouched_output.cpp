// TRUST row 2: return without writing, hoping the output buffer still holds
// the reference's result.
#include "kevolve/abi.h"

extern "C" int kevolve_kernel(const kv_args*) { return KV_OK; }
