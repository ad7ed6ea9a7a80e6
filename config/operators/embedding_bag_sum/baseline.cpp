// Baseline embedding_bag_sum: what a competent engineer writes without tuning.
// One fp32 accumulator row per bag (on the stack, 1024 columns at a time), OpenMP over bags.
#include <cstdint>
#include "kevolve/abi.h"

namespace {
inline float load(const kv_tensor& t, int64_t i) {
  if (t.dtype == KV_F16) return kv_f16_to_f32(static_cast<const uint16_t*>(t.data)[i]);
  return static_cast<const float*>(t.data)[i];
}
inline void store(const kv_tensor& t, int64_t i, float v) {
  if (t.dtype == KV_F16) static_cast<uint16_t*>(t.data)[i] = kv_f32_to_f16(v);
  else static_cast<float*>(t.data)[i] = v;
}
constexpr int64_t kMaxDim = 1024;
}  // namespace

extern "C" int kevolve_kernel(const kv_args* a) {
  const kv_tensor& table = a->inputs[0];
  const kv_tensor& indices = a->inputs[1];
  const kv_tensor& offsets = a->inputs[2];
  const kv_tensor& out = a->outputs[0];
  const int64_t nbags = out.dims[0], dim = out.dims[1];
  const int64_t* ip = static_cast<const int64_t*>(indices.data);
  const int64_t* op = static_cast<const int64_t*>(offsets.data);
#pragma omp parallel for schedule(dynamic, 16) num_threads(a->num_threads)
  for (int64_t b = 0; b < nbags; ++b) {
    float acc[kMaxDim];
    for (int64_t d0 = 0; d0 < dim; d0 += kMaxDim) {
      const int64_t n = dim - d0 < kMaxDim ? dim - d0 : kMaxDim;
      for (int64_t d = 0; d < n; ++d) acc[d] = 0.f;
      for (int64_t k = op[b]; k < op[b + 1]; ++k) {
        const int64_t row = ip[k] * table.strides[0] + d0;
        for (int64_t d = 0; d < n; ++d) acc[d] += load(table, row + d);
      }
      const int64_t yo = b * out.strides[0] + d0;
      for (int64_t d = 0; d < n; ++d) store(out, yo + d, acc[d]);
    }
  }
  return KV_OK;
}
