/* kevolve's CUDA-runtime-on-HIP header, for trusted baselines only: the
 * operators' plain CUDA baselines (config/operators/<op>/baseline.cu) use
 * nothing of the CUDA runtime but a stream, cudaGetLastError and launches
 * with <<<...>>>, so hipcc compiles them for AMD GPUs through this header
 * instead of a second copy of each (`baselines: {hip: {source: <op>/baseline.cu}}`).
 * Candidates never see it: the hip backend's compiler adds it to trusted
 * sources whose name ends in .cu only.
 */
#ifndef KEVOLVE_CUDA_ON_HIP_H
#define KEVOLVE_CUDA_ON_HIP_H

#include <hip/hip_runtime.h>

typedef hipStream_t cudaStream_t;
typedef hipError_t cudaError_t;
#define cudaSuccess hipSuccess
#define cudaGetLastError hipGetLastError

#endif /* KEVOLVE_CUDA_ON_HIP_H */
