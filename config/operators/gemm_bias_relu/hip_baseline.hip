// HIP baseline gemm_bias_relu (fp32): Debian 12 has no rocBLAS, so this is
// what a competent engineer writes without tuning: 16 x 16 LDS tiles of A
// and B, one output per lane, bias + ReLU fused in the store. Where rocBLAS
// is installed, an operator may name a rocBLAS baseline instead
// (libraries: [rocblas]).
#include <hip/hip_runtime.h>
#include "kevolve/abi.h"

namespace {

constexpr int T = 16;

__global__ void gemm_bias_relu(const float* A, const float* B, const float* bias, float* C, int m, int n, int k) {
  __shared__ float as[T][T + 1], bs[T][T + 1];
  const int r = blockIdx.y * T + threadIdx.y, c = blockIdx.x * T + threadIdx.x;
  float acc = 0.f;
  for (int k0 = 0; k0 < k; k0 += T) {
    as[threadIdx.y][threadIdx.x] = r < m && k0 + int(threadIdx.x) < k ? A[int64_t(r) * k + k0 + threadIdx.x] : 0.f;
    bs[threadIdx.y][threadIdx.x] = k0 + int(threadIdx.y) < k && c < n ? B[int64_t(k0 + threadIdx.y) * n + c] : 0.f;
    __syncthreads();
    for (int kk = 0; kk < T; ++kk) acc += as[threadIdx.y][kk] * bs[kk][threadIdx.x];
    __syncthreads();
  }
  if (r < m && c < n) C[int64_t(r) * n + c] = fmaxf(acc + bias[c], 0.f);
}

}  // namespace

extern "C" int kevolve_kernel(const kv_args* a, hipStream_t stream) {
  const kv_tensor& A = a->inputs[0];
  const kv_tensor& B = a->inputs[1];
  const kv_tensor& C = a->outputs[0];
  if (A.dtype != KV_F32 || B.dtype != KV_F32 || C.dtype != KV_F32) return KV_ERR_UNSUPPORTED;
  const int m = int(A.dims[0]), k = int(A.dims[1]), n = int(B.dims[1]);
  if (m == 0 || n == 0) return KV_OK;
  hipLaunchKernelGGL(gemm_bias_relu, dim3(unsigned((n + T - 1) / T), unsigned((m + T - 1) / T)), dim3(T, T), 0, stream,
                     static_cast<const float*>(A.data), static_cast<const float*>(B.data),
                     static_cast<const float*>(a->inputs[2].data), static_cast<float*>(C.data), m, n, k);
  return hipGetLastError() == hipSuccess ? KV_OK : KV_ERR_INTERNAL;
}
