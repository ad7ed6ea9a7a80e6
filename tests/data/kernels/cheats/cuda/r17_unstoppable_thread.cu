// TRUST row 17 (cuda): mis-scoped timing, with the evaluator's stop refused.
// Like r17_deferred_half.cu, the call returns before the second half is
// launched, and the host thread that launches it blocks every signal first,
// so the worker cannot park it: `suspicious`.
#include <cuda_runtime.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>

#include <thread>

#include "kevolve/abi.h"

__global__ void softmax_rows(const float* x, float* y, long n) {
  __shared__ float red[256];
  const float* xr = x + blockIdx.x * n;
  float* yr = y + blockIdx.x * n;
  float m = -INFINITY;
  for (long i = threadIdx.x; i < n; i += 256) m = fmaxf(m, xr[i]);
  red[threadIdx.x] = m;
  __syncthreads();
  for (int s = 128; s > 0; s >>= 1) {
    if (threadIdx.x < s) red[threadIdx.x] = fmaxf(red[threadIdx.x], red[threadIdx.x + s]);
    __syncthreads();
  }
  m = red[0];
  __syncthreads();
  float sum = 0.f;
  for (long i = threadIdx.x; i < n; i += 256) sum += expf(xr[i] - m);
  red[threadIdx.x] = sum;
  __syncthreads();
  for (int s = 128; s > 0; s >>= 1) {
    if (threadIdx.x < s) red[threadIdx.x] += red[threadIdx.x + s];
    __syncthreads();
  }
  const float inv = 1.f / red[0];
  for (long i = threadIdx.x; i < n; i += 256) yr[i] = expf(xr[i] - m) * inv;
}

extern "C" int kevolve_kernel(const kv_args* a, cudaStream_t stream) {
  const float* x = static_cast<const float*>(a->inputs[0].data);
  float* y = static_cast<float*>(a->outputs[0].data);
  const long rows = a->inputs[0].dims[0], n = a->inputs[0].dims[1], half = rows / 2;
  if (half > 0) softmax_rows<<<unsigned(half), 256, 0, stream>>>(x, y, n);
  // Signals are blocked in the new thread from its first instruction.
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  std::thread([=] {
    for (volatile int spin = 0; spin < 4000000; ++spin) {
    }
    softmax_rows<<<unsigned(rows - half), 256, 0, stream>>>(x + half * n, y + half * n, n);
  }).detach();
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  return cudaGetLastError() == cudaSuccess ? 0 : 3;
}
