// TRUST row 6: defer the computation into the checker: protect the output
// and compute it in a SIGSEGV handler when somebody reads it.
#include <signal.h>
#include <sys/mman.h>
#include <cstdint>
#include "kevolve/abi.h"

static void on_fault(int, siginfo_t*, void*) {}

extern "C" int kevolve_kernel(const kv_args* a) {
  struct sigaction sa = {};
  sa.sa_sigaction = on_fault;
  sa.sa_flags = SA_SIGINFO;
  sigaction(SIGSEGV, &sa, nullptr);
  mprotect(a->outputs[0].data, 4096, PROT_NONE);
  return KV_OK;
}
