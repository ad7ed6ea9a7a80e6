// Reference gemm_bias_relu: fp64, C = max(0, A @ B + bias), plain loops.
#include <cstdint>
#include "kevolve/abi.h"

extern "C" int kevolve_kernel(const kv_args* a) {
  const kv_tensor& A = a->inputs[0];
  const kv_tensor& B = a->inputs[1];
  const kv_tensor& bias = a->inputs[2];
  const kv_tensor& C = a->outputs[0];
  const int64_t m = A.dims[0], k = A.dims[1], n = B.dims[1];
  const double* ap = static_cast<const double*>(A.data);
  const double* bp = static_cast<const double*>(B.data);
  const double* biasp = static_cast<const double*>(bias.data);
  double* cp = static_cast<double*>(C.data);
  for (int64_t i = 0; i < m; ++i) {
    double* ci = cp + i * C.strides[0];
    for (int64_t j = 0; j < n; ++j) ci[j * C.strides[1]] = 0.0;
    for (int64_t p = 0; p < k; ++p) {
      const double aip = ap[i * A.strides[0] + p * A.strides[1]];
      const double* bk = bp + p * B.strides[0];
      for (int64_t j = 0; j < n; ++j) ci[j * C.strides[1]] += aip * bk[j * B.strides[1]];
    }
    for (int64_t j = 0; j < n; ++j) {
      const double v = ci[j * C.strides[1]] + biasp[j * bias.strides[0]];
      ci[j * C.strides[1]] = v > 0.0 ? v : 0.0;
    }
  }
  return KV_OK;
}
