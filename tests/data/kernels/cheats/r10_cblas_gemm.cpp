// TRUST row 10: fall back to the vendor library inside a "custom" kernel.
#include <cblas.h>
#include <cstdint>
#include "kevolve/abi.h"

extern "C" int kevolve_kernel(const kv_args* a) {
  const kv_tensor& A = a->inputs[0];
  const kv_tensor& B = a->inputs[1];
  const float* bias = static_cast<const float*>(a->inputs[2].data);
  float* C = static_cast<float*>(a->outputs[0].data);
  const int M = int(A.dims[0]), K = int(A.dims[1]), N = int(B.dims[1]);
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, M, N, K, 1.0f, static_cast<const float*>(A.data), K,
              static_cast<const float*>(B.data), N, 0.0f, C, N);
  for (int m = 0; m < M; ++m)
    for (int n = 0; n < N; ++n) C[m * N + n] = C[m * N + n] + bias[n] > 0 ? C[m * N + n] + bias[n] : 0.f;
  return KV_OK;
}
