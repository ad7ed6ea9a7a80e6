/* kevolve's HIP-on-CUDA header: compiles the HIP kernels kevolve writes for
 * AMD GPUs with nvcc, so that their correctness can be checked on an NVIDIA
 * GPU where no AMD GPU exists. It maps the part of the HIP runtime API that
 * kevolve/abi.h kernels may use (launching, errors, attributes, memset on the
 * given stream, shuffles and ballots) onto CUDA. It is a correctness aid,
 * never a performance figure for AMD: an NVIDIA GPU's timing says nothing
 * about an MI300X.
 *
 * Honest about the differences:
 *  - the wave is CUDA's 32-lane warp: `warpSize` is 32 and KEVOLVE_HIP_WAVE
 *    is 32; kernels written for 64-lane wavefronts must size their lane
 *    groups from it (knowledge/templates/hip/_hip.inc does) or fail here;
 *  - __ballot returns 64 bits with the upper 32 zero;
 *  - AMDGCN builtins (MFMA, DPP, ds_swizzle) do not exist here, except the
 *    one MFMA form emulated below, which follows the operand layout AMD
 *    documents (an emulation checks a kernel's use of that layout, not the
 *    hardware).
 * HIP's own nvidia_detail headers (HIP_PLATFORM=nvidia) do not compile
 * against CUDA 13 (STACK.md 7), hence this header.
 */
#ifndef KEVOLVE_HIP_ON_CUDA_H
#define KEVOLVE_HIP_ON_CUDA_H

#include <cuda_runtime.h>
#include <stdint.h>

#define KEVOLVE_HIP_ON_CUDA 1
#define KEVOLVE_HIP_WAVE 32
#define __HIP_PLATFORM_NVIDIA__ 1

typedef cudaStream_t hipStream_t;
typedef cudaError_t hipError_t;
typedef cudaFuncAttributes hipFuncAttributes;
#define hipSuccess cudaSuccess
#define hipErrorInvalidValue cudaErrorInvalidValue
#define hipGetLastError cudaGetLastError
#define hipPeekAtLastError cudaPeekAtLastError
#define hipGetErrorString cudaGetErrorString
#define hipGetErrorName cudaGetErrorName
#define hipGetDevice cudaGetDevice
#define hipDeviceGetAttribute cudaDeviceGetAttribute
#define hipDeviceAttributeMultiprocessorCount cudaDevAttrMultiProcessorCount
#define hipDeviceAttributeMaxSharedMemoryPerBlock cudaDevAttrMaxSharedMemoryPerBlock
#define hipFuncGetAttributes cudaFuncGetAttributes
#define hipFuncSetAttribute(f, a, v) cudaFuncSetAttribute(reinterpret_cast<const void*>(f), a, v)
#define hipFuncAttributeMaxDynamicSharedMemorySize cudaFuncAttributeMaxDynamicSharedMemorySize
#define hipOccupancyMaxActiveBlocksPerMultiprocessor cudaOccupancyMaxActiveBlocksPerMultiprocessor
#define hipMemsetAsync cudaMemsetAsync

#define hipLaunchKernelGGL(kernel, grid, block, shmem, stream, ...) \
  kernel<<<(grid), (block), (shmem), (stream)>>>(__VA_ARGS__)
#define HIP_DYNAMIC_SHARED(type, var) extern __shared__ type var[];

/* Wave-level operations, full-warp masks (HIP's have none). */
namespace kevolve_hip_on_cuda {
template <class T>
__device__ __forceinline__ T shfl_xor(T v, int m, int w = 32) { return __shfl_xor_sync(0xffffffffu, v, m, w); }
template <class T>
__device__ __forceinline__ T shfl(T v, int src, int w = 32) { return __shfl_sync(0xffffffffu, v, src, w); }
template <class T>
__device__ __forceinline__ T shfl_down(T v, unsigned d, int w = 32) { return __shfl_down_sync(0xffffffffu, v, d, w); }
template <class T>
__device__ __forceinline__ T shfl_up(T v, unsigned d, int w = 32) { return __shfl_up_sync(0xffffffffu, v, d, w); }
__device__ __forceinline__ unsigned long long ballot(int p) { return (unsigned long long)__ballot_sync(0xffffffffu, p); }
__device__ __forceinline__ int any(int p) { return __any_sync(0xffffffffu, p); }
__device__ __forceinline__ int all(int p) { return __all_sync(0xffffffffu, p); }
__device__ __forceinline__ unsigned lane_id() { return threadIdx.x & 31u; }

/* v_mfma_f32_32x32x2f32 on a 64-thread group (two warps; threadIdx.x / 64
 * picks the group), the layout AMD documents: lane l holds A[l % 32][l / 32]
 * and B[l / 32][l % 32]; acc[r] is D[8 * (r / 4) + 4 * (l / 32) + r % 4][l % 32].
 * Every thread of the block must call it together (it synchronizes the block). */
struct floatx16 {  /* nvcc has no ext_vector_type */
  float v[16];
  __device__ __forceinline__ float& operator[](int i) { return v[i]; }
  __device__ __forceinline__ float operator[](int i) const { return v[i]; }
};
__device__ __forceinline__ floatx16 mfma_f32_32x32x2f32(float a, float b, floatx16 acc) {
  __shared__ float sa[1024], sb[1024];
  const int t = threadIdx.x + threadIdx.y * blockDim.x;
  const int base = t & ~63, l = t & 63;
  sa[t] = a;
  sb[t] = b;
  __syncthreads();
  for (int r = 0; r < 16; ++r) {
    const int i = 8 * (r / 4) + 4 * (l / 32) + r % 4, j = l % 32;
    acc[r] += sa[base + i] * sb[base + j] + sa[base + 32 + i] * sb[base + 32 + j];
  }
  __syncthreads();
  return acc;
}
}  // namespace kevolve_hip_on_cuda

#define __shfl_xor(...) ::kevolve_hip_on_cuda::shfl_xor(__VA_ARGS__)
#define __shfl(...) ::kevolve_hip_on_cuda::shfl(__VA_ARGS__)
#define __shfl_down(...) ::kevolve_hip_on_cuda::shfl_down(__VA_ARGS__)
#define __shfl_up(...) ::kevolve_hip_on_cuda::shfl_up(__VA_ARGS__)
#define __ballot(p) ::kevolve_hip_on_cuda::ballot(p)
#define __any(p) ::kevolve_hip_on_cuda::any(p)
#define __all(p) ::kevolve_hip_on_cuda::all(p)
#define __lane_id() ::kevolve_hip_on_cuda::lane_id()
#define __builtin_amdgcn_mfma_f32_32x32x2f32(a, b, c, cbsz, abid, blgp) \
  ::kevolve_hip_on_cuda::mfma_f32_32x32x2f32(a, b, c)

#endif /* KEVOLVE_HIP_ON_CUDA_H */
