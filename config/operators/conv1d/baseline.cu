// CUDA baseline conv1d (NCW, stride 1, zero padding): one thread per output
// element, direct loops over input channels and taps, fp32.
#include <cuda_runtime.h>
#include "kevolve/abi.h"

namespace {

__global__ void conv1d(const float* x, const float* w, const float* bias, float* y, int64_t bsz, int64_t cin,
                       int64_t cout, int64_t len, int64_t kw, int64_t pad, int64_t lout) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= bsz * cout * lout) return;
  const int64_t l = i % lout, o = (i / lout) % cout, b = i / (lout * cout);
  float acc = bias[o];
  for (int64_t c = 0; c < cin; ++c)
    for (int64_t k = 0; k < kw; ++k) {
      const int64_t pos = l + k - pad;
      if (pos >= 0 && pos < len) acc += w[(o * cin + c) * kw + k] * x[(b * cin + c) * len + pos];
    }
  y[i] = acc;
}

}  // namespace

extern "C" int kevolve_kernel(const kv_args* a, cudaStream_t stream) {
  const kv_tensor& x = a->inputs[0];
  const kv_tensor& w = a->inputs[1];
  const kv_tensor& y = a->outputs[0];
  const int64_t total = kv_numel(&y);
  if (total == 0) return KV_OK;
  conv1d<<<unsigned((total + 255) / 256), 256, 0, stream>>>(
      static_cast<const float*>(x.data), static_cast<const float*>(w.data), static_cast<const float*>(a->inputs[2].data),
      static_cast<float*>(y.data), x.dims[0], x.dims[1], w.dims[0], x.dims[2], w.dims[2], a->params[0].i, y.dims[2]);
  return cudaGetLastError() == cudaSuccess ? KV_OK : KV_ERR_INTERNAL;
}
