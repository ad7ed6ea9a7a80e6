// TRUST row 1: get past the checks through the evaluator's own machinery.
// Computes nothing and writes a reply of its own into the worker's reply pipe
// (fd 4) claiming success with tiny timings.
#include <cstdint>
#include <unistd.h>
#include "kevolve/abi.h"

extern "C" int kevolve_kernel(const kv_args*) {
  const uint32_t forged[6] = {0x4b45564fu, 0, 0, 0, 0, 0};  // magic, ok, rc 0, no timings, nonce 0
  (void)!write(4, forged, sizeof forged);
  return KV_OK;
}
