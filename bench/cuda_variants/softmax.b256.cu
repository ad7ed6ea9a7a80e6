// Variant of knowledge/examples/cuda/softmax.cu: 256-thread row blocks up to N = 16384.
// Softmax over the last axis, CUDA. The row is read once into registers with
// 16-byte loads, reduced with warp shuffles (max, then sum of exponentials)
// and written once: 2 * B * N * 4 bytes, the compulsory traffic.
//   N <= 1024, N % 4 == 0: one warp per row, 8 rows per 256-thread block.
//   N <= 32768, N % 4 == 0: one block of 512 threads per row.
//   otherwise (odd N, bf16): one block per row, an online max/sum pass and a
//   write pass (the row is read twice).
#include <cuda_runtime.h>
#include <math.h>
#include "kevolve/abi.h"

namespace {

__device__ __forceinline__ float warp_max(float v) {
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}
__device__ __forceinline__ float warp_sum(float v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

// One warp per row; each lane holds up to kVec float4 of the row.
template <int kVec>
__global__ void __launch_bounds__(256) softmax_warp(const float4* __restrict__ x, float4* __restrict__ y, int64_t rows,
                                                     int n4) {
  const int64_t row = int64_t(blockIdx.x) * 8 + (threadIdx.x >> 5);
  const int lane = threadIdx.x & 31;
  if (row >= rows) return;
  const float4* xr = x + row * n4;
  float4 v[kVec];
  float m = -INFINITY;
#pragma unroll
  for (int j = 0; j < kVec; ++j) {
    const int i = lane + 32 * j;
    v[j] = i < n4 ? __ldcs(xr + i) : make_float4(-INFINITY, -INFINITY, -INFINITY, -INFINITY);
    m = fmaxf(m, fmaxf(fmaxf(v[j].x, v[j].y), fmaxf(v[j].z, v[j].w)));
  }
  m = warp_max(m);
  float s = 0.f;
#pragma unroll
  for (int j = 0; j < kVec; ++j) {
    v[j].x = __expf(v[j].x - m);
    v[j].y = __expf(v[j].y - m);
    v[j].z = __expf(v[j].z - m);
    v[j].w = __expf(v[j].w - m);
    s += (v[j].x + v[j].y) + (v[j].z + v[j].w);
  }
  const float inv = 1.f / warp_sum(s);
  float4* yr = y + row * n4;
#pragma unroll
  for (int j = 0; j < kVec; ++j) {
    const int i = lane + 32 * j;
    if (i < n4) __stcs(yr + i, make_float4(v[j].x * inv, v[j].y * inv, v[j].z * inv, v[j].w * inv));
  }
}

template <int kThreads>
__device__ __forceinline__ float block_reduce(float v, float* shared, bool is_max) {
  v = is_max ? warp_max(v) : warp_sum(v);
  if ((threadIdx.x & 31) == 0) shared[threadIdx.x >> 5] = v;
  __syncthreads();
  float r = threadIdx.x < kThreads / 32 ? shared[threadIdx.x] : (is_max ? -INFINITY : 0.f);
  if (threadIdx.x < 32) {
    r = is_max ? warp_max(r) : warp_sum(r);
    if (threadIdx.x == 0) shared[32] = r;
  }
  __syncthreads();
  r = shared[32];
  __syncthreads();
  return r;
}

// One block per row; each thread holds up to kVec float4.
template <int kThreads, int kVec>
__global__ void __launch_bounds__(kThreads) softmax_block(const float4* __restrict__ x, float4* __restrict__ y, int n4) {
  __shared__ float shared[33];
  const float4* xr = x + int64_t(blockIdx.x) * n4;
  float4 v[kVec];
  float m = -INFINITY;
#pragma unroll
  for (int j = 0; j < kVec; ++j) {
    const int i = threadIdx.x + kThreads * j;
    v[j] = i < n4 ? __ldcs(xr + i) : make_float4(-INFINITY, -INFINITY, -INFINITY, -INFINITY);
    m = fmaxf(m, fmaxf(fmaxf(v[j].x, v[j].y), fmaxf(v[j].z, v[j].w)));
  }
  m = block_reduce<kThreads>(m, shared, true);
  float s = 0.f;
#pragma unroll
  for (int j = 0; j < kVec; ++j) {
    v[j].x = __expf(v[j].x - m);
    v[j].y = __expf(v[j].y - m);
    v[j].z = __expf(v[j].z - m);
    v[j].w = __expf(v[j].w - m);
    s += (v[j].x + v[j].y) + (v[j].z + v[j].w);
  }
  const float inv = 1.f / block_reduce<kThreads>(s, shared, false);
  float4* yr = y + int64_t(blockIdx.x) * n4;
#pragma unroll
  for (int j = 0; j < kVec; ++j) {
    const int i = threadIdx.x + kThreads * j;
    if (i < n4) __stcs(yr + i, make_float4(v[j].x * inv, v[j].y * inv, v[j].z * inv, v[j].w * inv));
  }
}

__device__ __forceinline__ float load(const void* p, int dtype, int64_t i) {
  if (dtype == KV_BF16) return kv_bf16_to_f32(static_cast<const uint16_t*>(p)[i]);
  return static_cast<const float*>(p)[i];
}

// Any N and dtype: online max and sum in one pass, then the write pass.
__global__ void __launch_bounds__(256) softmax_any(const void* x, void* y, int dtype, int64_t n) {
  __shared__ float shared[33];
  __shared__ float shared_m[33];
  const int64_t base = int64_t(blockIdx.x) * n;
  float m = -INFINITY, s = 0.f;
  for (int64_t i = threadIdx.x; i < n; i += 256) {
    const float v = load(x, dtype, base + i);
    const float nm = fmaxf(m, v);
    s = s * __expf(m - nm) + __expf(v - nm);
    m = nm;
  }
  const float gm = block_reduce<256>(m, shared_m, true);
  s = m == -INFINITY ? 0.f : s * __expf(m - gm);
  const float inv = 1.f / block_reduce<256>(s, shared, false);
  for (int64_t i = threadIdx.x; i < n; i += 256) {
    const float v = __expf(load(x, dtype, base + i) - gm) * inv;
    if (dtype == KV_BF16) static_cast<uint16_t*>(y)[base + i] = kv_f32_to_bf16(v);
    else static_cast<float*>(y)[base + i] = v;
  }
}

}  // namespace

extern "C" int kevolve_kernel(const kv_args* a, cudaStream_t stream) {
  const kv_tensor& x = a->inputs[0];
  const kv_tensor& y = a->outputs[0];
  if (x.dtype != KV_F32 && x.dtype != KV_BF16) return KV_ERR_UNSUPPORTED;
  const int64_t rows = x.dims[0], n = x.dims[1];
  if (rows == 0 || n == 0) return KV_OK;
  const bool vec = x.dtype == KV_F32 && n % 4 == 0;
  const int n4 = int(n / 4);
  const auto* x4 = static_cast<const float4*>(x.data);
  auto* y4 = static_cast<float4*>(y.data);
  if (vec && n4 <= 32 * 8) {
    const unsigned blocks = unsigned((rows + 7) / 8);
    if (n4 <= 32 * 2) softmax_warp<2><<<blocks, 256, 0, stream>>>(x4, y4, rows, n4);
    else if (n4 <= 32 * 4) softmax_warp<4><<<blocks, 256, 0, stream>>>(x4, y4, rows, n4);
    else softmax_warp<8><<<blocks, 256, 0, stream>>>(x4, y4, rows, n4);
  } else if (vec && n4 <= 512 * 16) {
    // 256 threads: several blocks per SM, so one block's loads overlap another's stores.
    if (n4 <= 256 * 8) softmax_block<256, 8><<<unsigned(rows), 256, 0, stream>>>(x4, y4, n4);
    else if (n4 <= 256 * 16) softmax_block<256, 16><<<unsigned(rows), 256, 0, stream>>>(x4, y4, n4);
    else softmax_block<512, 16><<<unsigned(rows), 512, 0, stream>>>(x4, y4, n4);
  } else {
    softmax_any<<<unsigned(rows), 256, 0, stream>>>(x.data, y.data, x.dtype, n);
  }
  return cudaGetLastError() == cudaSuccess ? KV_OK : KV_ERR_INTERNAL;
}
