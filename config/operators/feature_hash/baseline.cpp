// Baseline feature_hash: what a competent engineer writes without tuning.
// fmix64 and a 64-bit % per element, OpenMP over elements.
#include <cstdint>
#include "kevolve/abi.h"

namespace {
inline uint64_t fmix64(uint64_t k) {
  k ^= k >> 33;
  k *= 0xff51afd7ed558ccdULL;
  k ^= k >> 33;
  k *= 0xc4ceb9fe1a85ec53ULL;
  k ^= k >> 33;
  return k;
}
}  // namespace

extern "C" int kevolve_kernel(const kv_args* a) {
  const int64_t n = a->inputs[0].dims[0];
  const uint64_t* ip = static_cast<const uint64_t*>(a->inputs[0].data);
  int64_t* yp = static_cast<int64_t*>(a->outputs[0].data);
  const int64_t table_size = kv_param_i(a, 0);
  const uint64_t salt = static_cast<uint64_t>(kv_param_i(a, 1));
  if (table_size < 1) return KV_ERR_UNSUPPORTED;
  const uint64_t m = static_cast<uint64_t>(table_size);
#pragma omp parallel for num_threads(a->num_threads)
  for (int64_t i = 0; i < n; ++i) yp[i] = static_cast<int64_t>(fmix64(ip[i] ^ salt) % m);
  return KV_OK;
}
