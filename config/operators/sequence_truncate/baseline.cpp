// Baseline sequence_truncate: what a competent engineer writes without tuning.
// Serial prefix sum of the kept lengths, then OpenMP over sequences copying rows,
// then the unused tail of out_values is zeroed.
#include <cstdint>
#include <cstring>
#include "kevolve/abi.h"

extern "C" int kevolve_kernel(const kv_args* a) {
  const kv_tensor& values = a->inputs[0];
  const kv_tensor& out_values = a->outputs[1];
  const int64_t nseq = a->inputs[1].dims[0] - 1;
  const int64_t keep = kv_param_i(a, 0);
  const int64_t rows = out_values.dims[0], dim = out_values.dims[1];
  const float* vp = static_cast<const float*>(values.data);
  const int64_t* op = static_cast<const int64_t*>(a->inputs[1].data);
  int64_t* oo = static_cast<int64_t*>(a->outputs[0].data);
  float* yp = static_cast<float*>(out_values.data);
  oo[0] = 0;
  for (int64_t b = 0; b < nseq; ++b) {
    const int64_t len = op[b + 1] - op[b];
    oo[b + 1] = oo[b] + (len < keep ? len : keep);
  }
#pragma omp parallel num_threads(a->num_threads)
  {
#pragma omp for
    for (int64_t b = 0; b < nseq; ++b) {
      const int64_t n = oo[b + 1] - oo[b];
      for (int64_t r = 0; r < n; ++r)
        std::memcpy(yp + (oo[b] + r) * out_values.strides[0],
                    vp + (op[b + 1] - n + r) * values.strides[0], dim * sizeof(float));
    }
#pragma omp for
    for (int64_t row = oo[nseq]; row < rows; ++row)
      std::memset(yp + row * out_values.strides[0], 0, dim * sizeof(float));
  }
  return KV_OK;
}
