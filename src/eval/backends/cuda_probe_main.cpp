// kevolve-cuda-probe: measures the ceilings of the first GPU once, for the
// cuda backend's roofline (cached by cuda_probe.cpp): a device-to-device
// copy (bytes read plus written over the median of 10 copies of 1 GiB) and a
// cuBLAS bf16 GEMM (8192^3, random data, median of 10), plus the FP32 rate
// from the SM count and clock (128 FP32 lanes per SM from Volta on).
// Prints "key value" lines; exits 77 when there is no GPU.
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

namespace {

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "kevolve-cuda-probe: %s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}

template <class F>
double median_ms(F&& f, int warmup, int runs) {
  cudaEvent_t a, b;
  check(cudaEventCreate(&a), "event");
  check(cudaEventCreate(&b), "event");
  for (int i = 0; i < warmup; ++i) f();
  std::vector<float> ms;
  for (int i = 0; i < runs; ++i) {
    check(cudaEventRecord(a), "record");
    f();
    check(cudaEventRecord(b), "record");
    check(cudaEventSynchronize(b), "sync");
    float t = 0;
    check(cudaEventElapsedTime(&t, a, b), "elapsed");
    ms.push_back(t);
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

}  // namespace

int main() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
    std::fprintf(stderr, "kevolve-cuda-probe: no CUDA device\n");
    return 77;
  }
  cudaDeviceProp p;
  check(cudaGetDeviceProperties(&p, 0), "properties");
  int clock_khz = 0;
  cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, 0);
  std::printf("name %s\n", p.name);
  std::printf("compute_capability %d%d\n", p.major, p.minor);
  std::printf("multiprocessors %d\n", p.multiProcessorCount);
  std::printf("l2_bytes %d\n", p.l2CacheSize);
  std::printf("clock_mhz %.0f\n", clock_khz / 1e3);
  std::printf("fp32_gflops %.1f\n", double(p.multiProcessorCount) * 128 * 2 * clock_khz / 1e6);

  const size_t bytes = size_t(1) << 30;
  void *src = nullptr, *dst = nullptr;
  check(cudaMalloc(&src, bytes), "malloc");
  check(cudaMalloc(&dst, bytes), "malloc");
  check(cudaMemset(src, 0x3c, bytes), "memset");
  const double copy_ms = median_ms([&] { check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice), "copy"); }, 3, 10);
  std::printf("copy_gbs %.1f\n", 2.0 * double(bytes) / (copy_ms * 1e-3) / 1e9);
  check(cudaFree(src), "free");
  check(cudaFree(dst), "free");

  const int m = 8192;
  std::vector<__nv_bfloat16> host(size_t(m) * m);
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  for (auto& v : host) v = __float2bfloat16(u(rng));
  __nv_bfloat16 *a = nullptr, *b = nullptr, *c = nullptr;
  const size_t mat = host.size() * sizeof(__nv_bfloat16);
  check(cudaMalloc(&a, mat), "malloc");
  check(cudaMalloc(&b, mat), "malloc");
  check(cudaMalloc(&c, mat), "malloc");
  check(cudaMemcpy(a, host.data(), mat, cudaMemcpyHostToDevice), "upload");
  check(cudaMemcpy(b, host.data(), mat, cudaMemcpyHostToDevice), "upload");
  cublasHandle_t h;
  if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS) {
    std::fprintf(stderr, "kevolve-cuda-probe: cublasCreate failed\n");
    return 1;
  }
  const float one = 1.f, zero = 0.f;
  bool ok = true;
  const double gemm_ms = median_ms(
      [&] {
        ok &= cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, m, m, m, &one, a, CUDA_R_16BF, m, b, CUDA_R_16BF, m, &zero, c,
                           CUDA_R_16BF, m, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT) == CUBLAS_STATUS_SUCCESS;
      },
      3, 10);
  if (!ok) {
    std::fprintf(stderr, "kevolve-cuda-probe: cublasGemmEx failed\n");
    return 1;
  }
  std::printf("bf16_gemm_gflops %.1f\n", 2.0 * double(m) * m * m / (gemm_ms * 1e-3) / 1e9);
  cublasDestroy(h);
  return 0;
}
