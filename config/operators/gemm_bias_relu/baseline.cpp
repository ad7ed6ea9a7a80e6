// Baseline gemm_bias_relu: OpenBLAS sgemm into C, then bias + ReLU in a second
// pass. What a competent engineer writes without tuning.
// OpenBLAS (pthread build) keeps its own thread pool, told to use
// args->num_threads. Its workers busy-wait after each call, so an OpenMP team
// for the bias pass would fight them for the cores (measured: 2.5x slower on
// 2 vCPUs); the pass, a few percent of the time, runs on the calling thread.
// OpenBLAS's speed depends on OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE in the
// environment (about 2x between Haswell and SkylakeX kernels here).
// bf16/fp16: widened to fp32 copies, the same sgemm, one rounding on the store.
#include <cblas.h>
#include <cstdint>
#include <vector>
#include "kevolve/abi.h"

namespace {
// bf16/fp16 tensor -> dense fp32 (rows x cols).
float to_f32(int dtype, uint16_t h) { return dtype == KV_BF16 ? kv_bf16_to_f32(h) : kv_f16_to_f32(h); }
uint16_t to_16(int dtype, float f) { return dtype == KV_BF16 ? kv_f32_to_bf16(f) : kv_f32_to_f16(f); }

std::vector<float> widen(const kv_tensor& t, int64_t rows, int64_t cols) {
  std::vector<float> out(static_cast<size_t>(rows * cols));
  const uint16_t* p = static_cast<const uint16_t*>(t.data);
  const int64_t ld = t.rank > 1 ? t.strides[0] : 0;
  const int64_t s = t.strides[t.rank - 1];
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) out[static_cast<size_t>(i * cols + j)] = to_f32(t.dtype, p[i * ld + j * s]);
  return out;
}

int half_gemm_bias_relu(const kv_args* a) {
  const kv_tensor& A = a->inputs[0];
  const kv_tensor& B = a->inputs[1];
  const kv_tensor& C = a->outputs[0];
  const int64_t m = A.dims[0], k = A.dims[1], n = B.dims[1];
  const std::vector<float> af = widen(A, m, k), bf = widen(B, k, n), biasf = widen(a->inputs[2], 1, n);
  std::vector<float> cf(static_cast<size_t>(m * n));
  openblas_set_num_threads(a->num_threads);
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<blasint>(m), static_cast<blasint>(n),
              static_cast<blasint>(k), 1.0f, af.data(), static_cast<blasint>(k), bf.data(), static_cast<blasint>(n),
              0.0f, cf.data(), static_cast<blasint>(n));
  uint16_t* cp = static_cast<uint16_t*>(C.data);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      const float v = cf[static_cast<size_t>(i * n + j)] + biasf[static_cast<size_t>(j)];
      cp[i * C.strides[0] + j * C.strides[1]] = to_16(C.dtype, v > 0.f ? v : 0.f);
    }
  return KV_OK;
}
}  // namespace

extern "C" int kevolve_kernel(const kv_args* a) {
  const kv_tensor& A = a->inputs[0];
  const kv_tensor& B = a->inputs[1];
  const kv_tensor& bias = a->inputs[2];
  const kv_tensor& C = a->outputs[0];
  if ((A.dtype == KV_BF16 || A.dtype == KV_F16) && B.dtype == A.dtype && bias.dtype == A.dtype && C.dtype == A.dtype)
    return half_gemm_bias_relu(a);
  if (A.dtype != KV_F32 || B.dtype != KV_F32 || bias.dtype != KV_F32 || C.dtype != KV_F32)
    return KV_ERR_UNSUPPORTED;
  if (A.strides[1] != 1 || B.strides[1] != 1 || C.strides[1] != 1 || bias.strides[0] != 1)
    return KV_ERR_UNSUPPORTED;
  const int64_t m = A.dims[0], k = A.dims[1], n = B.dims[1];
  const float* ap = static_cast<const float*>(A.data);
  const float* bp = static_cast<const float*>(B.data);
  const float* biasp = static_cast<const float*>(bias.data);
  float* cp = static_cast<float*>(C.data);
  const int64_t ldc = C.strides[0];

  openblas_set_num_threads(a->num_threads);
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<blasint>(m),
              static_cast<blasint>(n), static_cast<blasint>(k), 1.0f, ap,
              static_cast<blasint>(A.strides[0]), bp, static_cast<blasint>(B.strides[0]), 0.0f,
              cp, static_cast<blasint>(ldc));
  for (int64_t i = 0; i < m; ++i) {
    float* ci = cp + i * ldc;
    for (int64_t j = 0; j < n; ++j) {
      const float v = ci[j] + biasp[j];
      ci[j] = v > 0.f ? v : 0.f;
    }
  }
  return KV_OK;
}
