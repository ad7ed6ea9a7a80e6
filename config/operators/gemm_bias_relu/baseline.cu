// CUDA baseline gemm_bias_relu, one source for every variant (dispatch on
// the tensors' dtype):
// * fp32: cuBLAS SGEMM (default math mode, no TF32) into C, then bias + ReLU
//   in a second kernel: what PyTorch eager does for relu(A @ B + bias).
// * bf16/fp16: cuBLASLt matmul with its fused epilogue
//   (CUBLASLT_EPILOGUE_RELU_BIAS: bias added in fp32 to the fp32
//   accumulators, ReLU, one rounding to the output type), fp32 compute
//   (CUBLAS_COMPUTE_32F), the heuristic's first algorithm for the shape.
// Trusted code: it keeps one cuBLAS handle, one cuBLASLt handle and a 32 MiB
// cuBLASLt workspace for the process, and one cuBLASLt plan per shape
// (descriptors and the heuristic's algorithm), which no candidate may do.
// Shapes cuBLASLt has no algorithm for fall back to a plain kernel.
#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <map>
#include <tuple>

#include "kevolve/abi.h"

namespace {

__global__ void bias_relu(float* c, const float* bias, int64_t m, int64_t n) {
  const int64_t total = m * n;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < total; i += int64_t(gridDim.x) * blockDim.x) {
    const float v = c[i] + bias[i % n];
    c[i] = v > 0.f ? v : 0.f;
  }
}

cublasHandle_t handle() {
  static cublasHandle_t h = [] {
    cublasHandle_t x = nullptr;
    cublasCreate(&x);
    return x;
  }();
  return h;
}

int sgemm_bias_relu(const kv_args* a, cudaStream_t stream) {
  const kv_tensor& A = a->inputs[0];
  const kv_tensor& B = a->inputs[1];
  const kv_tensor& bias = a->inputs[2];
  const kv_tensor& C = a->outputs[0];
  const int64_t m = A.dims[0], k = A.dims[1], n = B.dims[1];
  cublasHandle_t h = handle();
  if (!h || cublasSetStream(h, stream) != CUBLAS_STATUS_SUCCESS) return KV_ERR_INTERNAL;
  const float one = 1.f, zero = 0.f;
  // Row-major C = A B is column-major C^T = B^T A^T.
  if (cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, int(n), int(m), int(k), &one, static_cast<const float*>(B.data), int(n),
                  static_cast<const float*>(A.data), int(k), &zero, static_cast<float*>(C.data), int(n)) !=
      CUBLAS_STATUS_SUCCESS)
    return KV_ERR_INTERNAL;
  const int64_t total = m * n;
  const int blocks = int((total + 255) / 256 < 4096 ? (total + 255) / 256 : 4096);
  bias_relu<<<blocks, 256, 0, stream>>>(static_cast<float*>(C.data), static_cast<const float*>(bias.data), m, n);
  return cudaGetLastError() == cudaSuccess ? KV_OK : KV_ERR_INTERNAL;
}

constexpr size_t kLtWorkspace = size_t(32) << 20;

// One plan per (type, m, n, k): descriptors and the heuristic's algorithm,
// made once, so a timed call is the matmul alone (the heuristic query takes
// tens of microseconds of host time).
struct lt_plan {
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t lb = nullptr, la = nullptr, lc = nullptr;
  cublasLtMatmulAlgo_t algo = {};
  bool ok = false;
};

struct lt_state {
  cublasLtHandle_t h = nullptr;
  void* workspace = nullptr;
  std::map<std::tuple<int, uint64_t, uint64_t, uint64_t>, lt_plan> plans;
};

lt_state& lt() {
  static lt_state s = [] {
    lt_state x;
    if (cublasLtCreate(&x.h) != CUBLAS_STATUS_SUCCESS) x.h = nullptr;
    if (cudaMalloc(&x.workspace, kLtWorkspace) != cudaSuccess) x.workspace = nullptr;
    return x;
  }();
  return s;
}

// Row-major C [m, n] = A [m, k] B [k, n] is column-major C^T = B^T A^T: the
// column-major operands are B (n x k, ld n) then A (k x m, ld k), and the
// bias runs along C^T's rows (n), as the RELU_BIAS epilogue expects.
lt_plan make_plan(cublasLtHandle_t h, cudaDataType_t type, uint64_t m, uint64_t n, uint64_t k) {
  lt_plan p;
  const cublasLtEpilogue_t epi = CUBLASLT_EPILOGUE_RELU_BIAS;
  const size_t ws = kLtWorkspace;
  cublasLtMatmulPreference_t pref = nullptr;
  cublasLtMatmulHeuristicResult_t r = {};
  int found = 0;
  if (cublasLtMatmulDescCreate(&p.op, CUBLAS_COMPUTE_32F, CUDA_R_32F) != CUBLAS_STATUS_SUCCESS) return p;
  p.ok = cublasLtMatmulDescSetAttribute(p.op, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof(epi)) ==
             CUBLAS_STATUS_SUCCESS &&
         cublasLtMatmulDescSetAttribute(p.op, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &type, sizeof(type)) ==
             CUBLAS_STATUS_SUCCESS &&
         cublasLtMatrixLayoutCreate(&p.lb, type, n, k, n) == CUBLAS_STATUS_SUCCESS &&
         cublasLtMatrixLayoutCreate(&p.la, type, k, m, k) == CUBLAS_STATUS_SUCCESS &&
         cublasLtMatrixLayoutCreate(&p.lc, type, n, m, n) == CUBLAS_STATUS_SUCCESS &&
         cublasLtMatmulPreferenceCreate(&pref) == CUBLAS_STATUS_SUCCESS &&
         cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof(ws)) ==
             CUBLAS_STATUS_SUCCESS &&
         cublasLtMatmulAlgoGetHeuristic(h, p.op, p.lb, p.la, p.lc, p.lc, pref, 1, &r, &found) ==
             CUBLAS_STATUS_SUCCESS &&
         found > 0;
  if (pref) cublasLtMatmulPreferenceDestroy(pref);
  if (p.ok) p.algo = r.algo;
  return p;
}

// Shapes cuBLASLt has no algorithm for: one thread per output, fp32 sums.
template <typename T>
__global__ void naive_bias_relu(const T* A, const T* B, const T* bias, T* C, int64_t m, int64_t n, int64_t k) {
  const int64_t i = blockIdx.y * int64_t(blockDim.y) + threadIdx.y, j = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (i >= m || j >= n) return;
  float acc = 0.f;
  for (int64_t p = 0; p < k; ++p) acc += float(A[i * k + p]) * float(B[p * n + j]);
  const float v = acc + float(bias[j]);
  C[i * n + j] = T(v > 0.f ? v : 0.f);
}

int lt_gemm_bias_relu(const kv_args* a, cudaStream_t stream, cudaDataType_t type) {
  const kv_tensor& A = a->inputs[0];
  const kv_tensor& B = a->inputs[1];
  const kv_tensor& bias = a->inputs[2];
  const kv_tensor& C = a->outputs[0];
  const uint64_t m = uint64_t(A.dims[0]), k = uint64_t(A.dims[1]), n = uint64_t(B.dims[1]);
  lt_state& s = lt();
  if (!s.h || !s.workspace) return KV_ERR_INTERNAL;
  const auto key = std::make_tuple(int(type), m, n, k);
  auto it = s.plans.find(key);
  if (it == s.plans.end()) it = s.plans.emplace(key, make_plan(s.h, type, m, n, k)).first;
  lt_plan& p = it->second;
  if (!p.ok) {
    const dim3 block(32, 8), grid(unsigned((n + 31) / 32), unsigned((m + 7) / 8));
    if (type == CUDA_R_16BF)
      naive_bias_relu<<<grid, block, 0, stream>>>(
          static_cast<const __nv_bfloat16*>(A.data), static_cast<const __nv_bfloat16*>(B.data),
          static_cast<const __nv_bfloat16*>(bias.data), static_cast<__nv_bfloat16*>(C.data), int64_t(m), int64_t(n),
          int64_t(k));
    else
      naive_bias_relu<<<grid, block, 0, stream>>>(static_cast<const __half*>(A.data), static_cast<const __half*>(B.data),
                                                  static_cast<const __half*>(bias.data), static_cast<__half*>(C.data),
                                                  int64_t(m), int64_t(n), int64_t(k));
    return cudaGetLastError() == cudaSuccess ? KV_OK : KV_ERR_INTERNAL;
  }
  const void* bias_ptr = bias.data;
  const float one = 1.f, zero = 0.f;
  if (cublasLtMatmulDescSetAttribute(p.op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias_ptr, sizeof(bias_ptr)) !=
      CUBLAS_STATUS_SUCCESS)
    return KV_ERR_INTERNAL;
  return cublasLtMatmul(s.h, p.op, &one, B.data, p.lb, A.data, p.la, &zero, C.data, p.lc, C.data, p.lc, &p.algo,
                        s.workspace, kLtWorkspace, stream) == CUBLAS_STATUS_SUCCESS
             ? KV_OK
             : KV_ERR_INTERNAL;
}

}  // namespace

extern "C" int kevolve_kernel(const kv_args* a, cudaStream_t stream) {
  const kv_tensor& A = a->inputs[0];
  const kv_tensor& B = a->inputs[1];
  const kv_tensor& bias = a->inputs[2];
  const kv_tensor& C = a->outputs[0];
  const int dt = A.dtype;
  if (B.dtype != dt || bias.dtype != dt || C.dtype != dt) return KV_ERR_UNSUPPORTED;
  if (A.dims[0] == 0 || B.dims[1] == 0) return KV_OK;
  if (dt == KV_F32) return sgemm_bias_relu(a, stream);
  if (dt == KV_BF16) return lt_gemm_bias_relu(a, stream, CUDA_R_16BF);
  if (dt == KV_F16) return lt_gemm_bias_relu(a, stream, CUDA_R_16F);
  return KV_ERR_UNSUPPORTED;
}
