// TRUST row 10: reach the vendor library at run time, where no link line shows it.
#include <dlfcn.h>
#include "kevolve/abi.h"

typedef void (*sgemm_fn)(int, int, int, int, int, int, float, const float*, int, const float*, int, float, float*, int);

extern "C" int kevolve_kernel(const kv_args* a) {
  void* h = dlopen("libopenblas.so.0", RTLD_NOW);
  if (!h) return KV_ERR_INTERNAL;
  auto gemm = reinterpret_cast<sgemm_fn>(dlsym(h, "cblas_sgemm"));
  (void)gemm;
  (void)a;
  return KV_OK;
}
