// TRUST row 11: silently lower precision: an fp32 GEMM that accumulates in fp16.
#include <cstdint>
#include "kevolve/abi.h"

extern "C" int kevolve_kernel(const kv_args* a) {
  const kv_tensor& A = a->inputs[0];
  const kv_tensor& B = a->inputs[1];
  const float* ap = static_cast<const float*>(A.data);
  const float* bp = static_cast<const float*>(B.data);
  const float* bias = static_cast<const float*>(a->inputs[2].data);
  float* C = static_cast<float*>(a->outputs[0].data);
  const int64_t M = A.dims[0], K = A.dims[1], N = B.dims[1];
#pragma omp parallel for num_threads(a->num_threads)
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < N; ++n) {
      _Float16 acc = 0;
      for (int64_t k = 0; k < K; ++k) acc += _Float16(ap[m * K + k]) * _Float16(bp[k * N + n]);
      const float v = float(acc) + bias[n];
      C[m * N + n] = v > 0 ? v : 0.f;
    }
  return KV_OK;
}
