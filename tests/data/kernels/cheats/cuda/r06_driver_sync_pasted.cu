// TRUST rows 5/6: a driver synchronization hidden from the source scan by
// token pasting. libcuda is linked for the one driver function a kernel may
// call (cuTensorMapEncodeTiled, for TMA); the import check sees any other.
#include <cuda.h>
#include <cuda_runtime.h>
#include "kevolve/abi.h"
#define JOIN(a, b) a##b
__global__ void scale_rows(const float* x, float* y, long n) {
  for (long i = blockIdx.x * 256L + threadIdx.x; i < n; i += 256L * gridDim.x) y[i] = x[i];
}

extern "C" int kevolve_kernel(const kv_args* a, cudaStream_t stream) {
  const long n = a->inputs[0].dims[0] * a->inputs[0].dims[1];
  scale_rows<<<128, 256, 0, stream>>>(static_cast<const float*>(a->inputs[0].data), static_cast<float*>(a->outputs[0].data), n);
  JOIN(cuCtx, Synchronize)();
  return cudaGetLastError() == cudaSuccess ? 0 : 3;
}
