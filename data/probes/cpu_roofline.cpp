// Measures this machine's CPU roofline for kevolve doctor: a STREAM-like
// triad (plain and non-temporal stores) for bandwidth, reads of a per-thread
// buffer that stays in the L2 (the floor of data the caches hold), and an FMA
// loop for the fp32 peak. Compiled at run time with -O3 -march=native -fopenmp, like the
// kernels it judges. Prints "key value" lines.
#include <immintrin.h>
#include <omp.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

double triad(float* a, const float* b, const float* c, long n, bool nontemporal) {
  double best = 1e30;
  for (int rep = 0; rep < 12; ++rep) {
    const auto t0 = std::chrono::steady_clock::now();
#pragma omp parallel for schedule(static)
    for (long blk = 0; blk < n / 4096; ++blk) {
      const long lo = blk * 4096, hi = lo + 4096;
#if defined(__AVX512F__)
      if (nontemporal) {
        const __m512 s = _mm512_set1_ps(3.0f);
        for (long i = lo; i < hi; i += 16)
          _mm512_stream_ps(a + i, _mm512_fmadd_ps(s, _mm512_load_ps(c + i), _mm512_load_ps(b + i)));
        continue;
      }
#elif defined(__AVX__)
      if (nontemporal) {
        const __m256 s = _mm256_set1_ps(3.0f);
        for (long i = lo; i < hi; i += 8)
          _mm256_stream_ps(a + i, _mm256_add_ps(_mm256_load_ps(b + i), _mm256_mul_ps(s, _mm256_load_ps(c + i))));
        continue;
      }
#endif
      for (long i = lo; i < hi; ++i) a[i] = b[i] + 3.0f * c[i];
    }
    _mm_sfence();
    const double t = seconds_since(t0);
    if (rep > 0 && t < best) best = t;
  }
  return 3.0 * double(n) * sizeof(float) / best / 1e9;
}

typedef float vec_t __attribute__((vector_size(64)));

// Bytes per second read by all threads, each summing its own 256 KiB buffer
// over and over (16 independent vector accumulators): the L2's rate.
double cache_read() {
  constexpr long kFloats = 256 * 1024 / sizeof(float), kPasses = 400;
  double best = 0, sink = 0;
  for (int rep = 0; rep < 6; ++rep) {
    double total = 0;
    const auto t0 = std::chrono::steady_clock::now();
#pragma omp parallel reduction(+ : total)
    {
      float* buf = static_cast<float*>(std::aligned_alloc(64, kFloats * sizeof(float)));
      for (long i = 0; i < kFloats; ++i) buf[i] = float(i & 7);
#pragma omp barrier
      vec_t acc[16] = {};
      for (long p = 0; p < kPasses; ++p)
        for (long i = 0; i < kFloats; i += 16 * 16)
          for (int k = 0; k < 16; ++k) {
            vec_t v;
            std::memcpy(&v, buf + i + k * 16, sizeof v);
            acc[k] += v;
          }
      for (int k = 1; k < 16; ++k) acc[0] += acc[k];
      total += acc[0][0];
      std::free(buf);
    }
    const double t = seconds_since(t0);
    sink += total;
    const double gbs = double(omp_get_max_threads()) * kPasses * kFloats * sizeof(float) / t / 1e9;
    if (gbs > best) best = gbs;
  }
  if (sink == 42.0) std::puts("");
  return best;
}

double fma_peak() {
  const long iters = 10000000;
  double best = 0;
  for (int rep = 0; rep < 8; ++rep) {
    const auto t0 = std::chrono::steady_clock::now();
    double sink = 0;
#pragma omp parallel reduction(+ : sink)
    {
      vec_t acc[12];
      const vec_t m = {} , a = {};
      vec_t mm = m + 0.999999f, aa = a + 1e-7f;
      for (int k = 0; k < 12; ++k) acc[k] = vec_t{} + float(k);
      for (long i = 0; i < iters; ++i)
        for (int k = 0; k < 12; ++k) acc[k] = acc[k] * mm + aa;
      for (int k = 0; k < 12; ++k) sink += acc[k][0];
    }
    const double t = seconds_since(t0);
    const double flops = double(omp_get_max_threads()) * iters * 12 * (sizeof(vec_t) / sizeof(float)) * 2;
    if (flops / t > best) best = flops / t;
    if (sink == 42.0) std::puts("");
  }
  return best / 1e9;
}

}  // namespace

int main(int argc, char** argv) {
  const long mib = argc > 1 ? std::atol(argv[1]) : 128;
  const long n = mib * 1024 * 1024 / long(sizeof(float)) / 4096 * 4096;
  float* a = static_cast<float*>(std::aligned_alloc(64, size_t(n) * sizeof(float)));
  float* b = static_cast<float*>(std::aligned_alloc(64, size_t(n) * sizeof(float)));
  float* c = static_cast<float*>(std::aligned_alloc(64, size_t(n) * sizeof(float)));
  if (!a || !b || !c) return 1;
#pragma omp parallel for schedule(static)
  for (long i = 0; i < n; ++i) {
    a[i] = 0.0f;
    b[i] = 1.0f;
    c[i] = 2.0f;
  }
  std::printf("threads %d\n", omp_get_max_threads());
  std::printf("triad_gbs %.3f\n", triad(a, b, c, n, false));
  std::printf("triad_nt_gbs %.3f\n", triad(a, b, c, n, true));
  std::printf("cache_read_gbs %.3f\n", cache_read());
  std::printf("fma_gflops %.3f\n", fma_peak());
  std::free(a);
  std::free(b);
  std::free(c);
  return 0;
}
