// CUDA baseline gemm_bias_relu: cuBLAS SGEMM (fp32, default math mode, no
// TF32) into C, then bias + ReLU in a second kernel: what PyTorch eager does
// for relu(A @ B + bias) in fp32. Trusted code: it keeps one cuBLAS handle
// for the process, which no candidate may do.
#include <cublas_v2.h>
#include <cuda_runtime.h>
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

}  // namespace

extern "C" int kevolve_kernel(const kv_args* a, cudaStream_t stream) {
  const kv_tensor& A = a->inputs[0];
  const kv_tensor& B = a->inputs[1];
  const kv_tensor& bias = a->inputs[2];
  const kv_tensor& C = a->outputs[0];
  if (A.dtype != KV_F32 || B.dtype != KV_F32 || bias.dtype != KV_F32 || C.dtype != KV_F32) return KV_ERR_UNSUPPORTED;
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
