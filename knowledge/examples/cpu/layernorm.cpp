// Example kernel: layernorm (fp32 and bf16), y = (x - mean) / sqrt(var + eps) * gamma + beta.
//
// Memory-bound: the floor is one read of x and one write of y. Each row is
// read from DRAM once; the second and third passes (centred variance, then
// normalize) hit the row again while it is still in L1/L2 (a 4096-float row
// is 16 KiB). Per row:
//   1. sum of x            -> mean          (4 independent zmm accumulators)
//   2. sum of (x - mean)^2 -> rstd          (two-pass variance: no cancellation)
//   3. y = (x - mean) * rstd * gamma + beta (gamma/beta stay in L1 across rows)
// All math is fp32. y is written with non-temporal stores when the row is
// aligned for them. Rows are split statically between threads.
// Without AVX-512 (F+BW+VL) a portable scalar path is used.
#include <cmath>
#include <cstdint>
#include "kevolve/abi.h"
#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VL__)
#pragma GCC diagnostic push
// gcc 12's own intrinsic headers trip -Wmaybe-uninitialized (gcc PR 105593).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop
#define EXAMPLE_AVX512 1
#endif

namespace {

#ifdef EXAMPLE_AVX512
// ---- 16 lanes of fp32 <-> the storage dtype DT (KV_F32, KV_BF16, KV_F16) ----
// Full vectors use plain unaligned loads/stores; only the row tail is masked.
// bf16 widens with a shift and narrows with round-to-nearest-even, NaN kept
// quiet (vcvtneps2bf16 where AVX512_BF16 exists, else integer ops matching
// kv_f32_to_bf16); fp16 uses vcvtph2ps / vcvtps2ph (round to nearest even,
// like kv_f32_to_f16).
template <int DT>
inline __m512 widen16(__m256i h) {
  if constexpr (DT == KV_F16) return _mm512_cvtph_ps(h);
  else return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
}
template <int DT>
inline __m256i narrow16(__m512 v) {
  if constexpr (DT == KV_F16) {
    return _mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  } else {
#ifdef __AVX512BF16__
    // One instruction (AVX512_BF16), also round to nearest even; it differs from
    // kv_f32_to_bf16 only in flushing inputs below 1.2e-38 to zero.
    return (__m256i)_mm512_cvtneps_pbh(v);
#else
    const __m512i u = _mm512_castps_si512(v);
    const __m512i hi = _mm512_srli_epi32(u, 16);
    const __m512i lsb = _mm512_and_si512(hi, _mm512_set1_epi32(1));
    __m512i r = _mm512_srli_epi32(
        _mm512_add_epi32(_mm512_add_epi32(u, _mm512_set1_epi32(0x7fff)), lsb), 16);
    const __mmask16 nan = _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
    r = _mm512_mask_mov_epi32(r, nan, _mm512_or_si512(hi, _mm512_set1_epi32(0x40)));
    return _mm512_cvtepi32_epi16(r);
#endif
  }
}
template <int DT>
inline __m512 load16(const void* p, int64_t i) {
  if constexpr (DT == KV_F32) return _mm512_loadu_ps(static_cast<const float*>(p) + i);
  else return widen16<DT>(_mm256_loadu_si256(
      reinterpret_cast<const __m256i*>(static_cast<const uint16_t*>(p) + i)));
}
// Lanes outside m read as 0.
template <int DT>
inline __m512 load16(const void* p, int64_t i, __mmask16 m) {
  if constexpr (DT == KV_F32) return _mm512_maskz_loadu_ps(m, static_cast<const float*>(p) + i);
  else return widen16<DT>(_mm256_maskz_loadu_epi16(m, static_cast<const uint16_t*>(p) + i));
}
template <int DT>
inline void store16(void* p, int64_t i, __m512 v) {
  if constexpr (DT == KV_F32) _mm512_storeu_ps(static_cast<float*>(p) + i, v);
  else _mm256_storeu_si256(reinterpret_cast<__m256i*>(static_cast<uint16_t*>(p) + i), narrow16<DT>(v));
}
template <int DT>
inline void store16(void* p, int64_t i, __m512 v, __mmask16 m) {
  if constexpr (DT == KV_F32) _mm512_mask_storeu_ps(static_cast<float*>(p) + i, m, v);
  else _mm256_mask_storeu_epi16(static_cast<uint16_t*>(p) + i, m, narrow16<DT>(v));
}
// Non-temporal store of 16 lanes; p + i must be 64-byte (fp32) or 32-byte
// (16-bit types) aligned. Skips the read-for-ownership of output lines that are
// fully overwritten: y is written once and not read again by this kernel.
template <int DT>
inline void stream16(void* p, int64_t i, __m512 v) {
  if constexpr (DT == KV_F32) _mm512_stream_ps(static_cast<float*>(p) + i, v);
  else _mm256_stream_si256(reinterpret_cast<__m256i*>(static_cast<uint16_t*>(p) + i), narrow16<DT>(v));
}
template <int DT>
inline bool stream_aligned(const void* p) {
  return reinterpret_cast<uintptr_t>(p) % (DT == KV_F32 ? 64 : 32) == 0;
}
inline __mmask16 tail_mask(int64_t n) {
  return n >= 16 ? __mmask16(0xffff) : __mmask16((1u << n) - 1u);
}

inline __m512 normalize16(__m512 xv, __m512 vr, __m512 vshift, __m512 g, __m512 b) {
  return _mm512_fmadd_ps(_mm512_fmadd_ps(xv, vr, vshift), g, b);  // (x*rstd - mean*rstd)*g + b
}

template <int DT>
void layernorm_row(const void* x, const void* gamma, const void* beta, void* y, int64_t n,
                   float eps) {
  // 1. mean
  __m512 s0 = _mm512_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
  int64_t i = 0;
  for (; i + 64 <= n; i += 64) {
    s0 = _mm512_add_ps(s0, load16<DT>(x, i));
    s1 = _mm512_add_ps(s1, load16<DT>(x, i + 16));
    s2 = _mm512_add_ps(s2, load16<DT>(x, i + 32));
    s3 = _mm512_add_ps(s3, load16<DT>(x, i + 48));
  }
  for (; i + 16 <= n; i += 16) s0 = _mm512_add_ps(s0, load16<DT>(x, i));
  if (i < n) s1 = _mm512_add_ps(s1, load16<DT>(x, i, tail_mask(n - i)));
  const float mean =
      _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(s0, s1), _mm512_add_ps(s2, s3))) /
      static_cast<float>(n);
  // 2. centred variance (masked-off tail lanes must not add (0 - mean)^2)
  const __m512 vmean = _mm512_set1_ps(mean);
  s0 = s1 = s2 = s3 = _mm512_setzero_ps();
  for (i = 0; i + 64 <= n; i += 64) {
    const __m512 d0 = _mm512_sub_ps(load16<DT>(x, i), vmean);
    const __m512 d1 = _mm512_sub_ps(load16<DT>(x, i + 16), vmean);
    const __m512 d2 = _mm512_sub_ps(load16<DT>(x, i + 32), vmean);
    const __m512 d3 = _mm512_sub_ps(load16<DT>(x, i + 48), vmean);
    s0 = _mm512_fmadd_ps(d0, d0, s0);
    s1 = _mm512_fmadd_ps(d1, d1, s1);
    s2 = _mm512_fmadd_ps(d2, d2, s2);
    s3 = _mm512_fmadd_ps(d3, d3, s3);
  }
  for (; i + 16 <= n; i += 16) {
    const __m512 d = _mm512_sub_ps(load16<DT>(x, i), vmean);
    s0 = _mm512_fmadd_ps(d, d, s0);
  }
  if (i < n) {
    const __mmask16 m = tail_mask(n - i);
    const __m512 d = _mm512_maskz_sub_ps(m, load16<DT>(x, i, m), vmean);
    s1 = _mm512_fmadd_ps(d, d, s1);
  }
  const float var =
      _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(s0, s1), _mm512_add_ps(s2, s3))) /
      static_cast<float>(n);
  const float rstd = 1.f / std::sqrt(var + eps);
  // 3. normalize
  const __m512 vr = _mm512_set1_ps(rstd), vshift = _mm512_set1_ps(-mean * rstd);
  i = 0;
  if (stream_aligned<DT>(y)) {
    for (; i + 16 <= n; i += 16)
      stream16<DT>(y, i, normalize16(load16<DT>(x, i), vr, vshift, load16<DT>(gamma, i),
                                         load16<DT>(beta, i)));
  } else {
    for (; i + 16 <= n; i += 16)
      store16<DT>(y, i, normalize16(load16<DT>(x, i), vr, vshift, load16<DT>(gamma, i),
                                        load16<DT>(beta, i)));
  }
  if (i < n) {
    const __mmask16 m = tail_mask(n - i);
    store16<DT>(y, i, normalize16(load16<DT>(x, i, m), vr, vshift, load16<DT>(gamma, i, m),
                                      load16<DT>(beta, i, m)), m);
  }
}
#else
template <int DT>
inline float load1(const void* p, int64_t i) {
  if constexpr (DT == KV_F32) return static_cast<const float*>(p)[i];
  else if constexpr (DT == KV_F16) return kv_f16_to_f32(static_cast<const uint16_t*>(p)[i]);
  else return kv_bf16_to_f32(static_cast<const uint16_t*>(p)[i]);
}
template <int DT>
inline void store1(void* p, int64_t i, float v) {
  if constexpr (DT == KV_F32) static_cast<float*>(p)[i] = v;
  else if constexpr (DT == KV_F16) static_cast<uint16_t*>(p)[i] = kv_f32_to_f16(v);
  else static_cast<uint16_t*>(p)[i] = kv_f32_to_bf16(v);
}
template <int DT>
void layernorm_row(const void* x, const void* gamma, const void* beta, void* y, int64_t n,
                   float eps) {
  float s = 0.f;
  for (int64_t i = 0; i < n; ++i) s += load1<DT>(x, i);
  const float mean = s / static_cast<float>(n);
  float q = 0.f;
  for (int64_t i = 0; i < n; ++i) {
    const float d = load1<DT>(x, i) - mean;
    q += d * d;
  }
  const float rstd = 1.f / std::sqrt(q / static_cast<float>(n) + eps);
  for (int64_t i = 0; i < n; ++i)
    store1<DT>(y, i, (load1<DT>(x, i) - mean) * rstd * load1<DT>(gamma, i) + load1<DT>(beta, i));
}
#endif

template <int DT>
void run(const kv_args* a) {
  const kv_tensor& x = a->inputs[0];
  const kv_tensor& y = a->outputs[0];
  const int64_t rows = x.dims[0], n = x.dims[1];
  const int64_t es = DT == KV_F32 ? 4 : 2;  // element size in bytes
  const char* xp = static_cast<const char*>(x.data);
  char* yp = static_cast<char*>(y.data);
  const void* gamma = a->inputs[1].data;
  const void* beta = a->inputs[2].data;
  const float eps = static_cast<float>(kv_param_f(a, 0));
#pragma omp parallel num_threads(a->num_threads)
  {
#pragma omp for schedule(static) nowait
    for (int64_t r = 0; r < rows; ++r)
      layernorm_row<DT>(xp + r * x.strides[0] * es, gamma, beta, yp + r * y.strides[0] * es, n,
                        eps);
#ifdef EXAMPLE_AVX512
    _mm_sfence();  // make this thread's non-temporal stores globally visible
#endif
  }
}

}  // namespace

extern "C" int kevolve_kernel(const kv_args* a) {
  const kv_tensor& x = a->inputs[0];
  const kv_tensor& y = a->outputs[0];
  const int dt = x.dtype;
  if (dt != KV_F32 && dt != KV_BF16) return KV_ERR_UNSUPPORTED;
  if (a->inputs[1].dtype != dt || a->inputs[2].dtype != dt || y.dtype != dt)
    return KV_ERR_UNSUPPORTED;
  if (x.strides[1] != 1 || y.strides[1] != 1 || a->inputs[1].strides[0] != 1 ||
      a->inputs[2].strides[0] != 1)
    return KV_ERR_UNSUPPORTED;
  if (x.dims[0] <= 0 || x.dims[1] <= 0) return KV_OK;
  if (dt == KV_F32) run<KV_F32>(a);
  else run<KV_BF16>(a);
  return KV_OK;
}
