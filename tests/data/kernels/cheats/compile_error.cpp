// Does not compile.
#include "kevolve/abi.h"

extern "C" int kevolve_kernel(const kv_args* a) { return a->no_such_field; }
