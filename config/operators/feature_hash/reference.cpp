// Reference feature_hash: out[i] = fmix64((uint64)ids[i] ^ (uint64)salt) % table_size.
#include <cstdint>
#include "kevolve/abi.h"

namespace {
uint64_t fmix64(uint64_t k) {  // MurmurHash3 64-bit finalizer
  k ^= k >> 33;
  k *= 0xff51afd7ed558ccdULL;
  k ^= k >> 33;
  k *= 0xc4ceb9fe1a85ec53ULL;
  k ^= k >> 33;
  return k;
}
}  // namespace

extern "C" int kevolve_kernel(const kv_args* a) {
  const kv_tensor& ids = a->inputs[0];
  const kv_tensor& out = a->outputs[0];
  const int64_t table_size = kv_param_i(a, 0);
  const uint64_t salt = static_cast<uint64_t>(kv_param_i(a, 1));
  if (table_size < 1) return KV_ERR_UNSUPPORTED;
  const int64_t n = ids.dims[0];
  const int64_t* ip = static_cast<const int64_t*>(ids.data);
  int64_t* yp = static_cast<int64_t*>(out.data);
  for (int64_t i = 0; i < n; ++i) {
    const uint64_t h = fmix64(static_cast<uint64_t>(ip[i * ids.strides[0]]) ^ salt);
    yp[i * out.strides[0]] = static_cast<int64_t>(h % static_cast<uint64_t>(table_size));
  }
  return KV_OK;
}
