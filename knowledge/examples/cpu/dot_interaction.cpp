// Example kernel: dot_interaction (x[B,F,D] fp32|bf16 -> out[B, F*(F-1)/2],
// out[b, i*(i-1)/2 + j] = <x[b,i], x[b,j]> for j < i).
//
// What makes it fast:
//  * Per sample, the lower triangle of x x^T is covered by 4x4 register tiles: 16 zmm
//    accumulators, and each step loads 4 i-rows and 4 j-rows once for 16 FMAs, so a
//    loaded row is reused 4 times (the whole sample, F*D*4 bytes, stays in L1).
//  * The 16 accumulators of a tile are reduced together by a transpose-add tree
//    (unpack/shuffle: 15 adds for 16 sums instead of 16 separate horizontal reductions);
//    lane 4*ii+jj of the result is pair (i0+ii, j0+jj), and each tile row's valid
//    pairs (j < i) go out with one masked store.
//  * bf16 uses AVX512-BF16 vdpbf16ps (32 products per instruction, fp32 accumulation);
//    the fp32 result is rounded to bf16 (nearest even) once, on the store.
//  * Rows past F in the last tiles are clamped to row F-1 (valid memory, results unused),
//    so the inner loop has no bounds checks; D tails use masked loads (zeros add nothing).
#include <cstdint>
#include "kevolve/abi.h"
#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VL__)
// gcc 12 reports -Wmaybe-uninitialized inside its own AVX-512 headers (their
// _mm512_undefined_*() placeholders); silence it for the header text only.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop
#define KV_DOT_AVX512 1
#endif

namespace {

#if defined(KV_DOT_AVX512)

// lane k of the result = sum of the 16 lanes of v[k]
inline __m512 reduce16(const __m512* v) {
  __m512 t[8], u[4];
  for (int m = 0; m < 8; ++m)
    t[m] = _mm512_add_ps(_mm512_unpacklo_ps(v[2 * m], v[2 * m + 1]),
                         _mm512_unpackhi_ps(v[2 * m], v[2 * m + 1]));
  for (int m = 0; m < 4; ++m) {
    const __m512d a = _mm512_castps_pd(t[2 * m]), b = _mm512_castps_pd(t[2 * m + 1]);
    u[m] = _mm512_add_ps(_mm512_castpd_ps(_mm512_unpacklo_pd(a, b)),
                         _mm512_castpd_ps(_mm512_unpackhi_pd(a, b)));
  }
  const __m512 w0 = _mm512_add_ps(_mm512_shuffle_f32x4(u[0], u[1], 0x88),
                                  _mm512_shuffle_f32x4(u[0], u[1], 0xDD));
  const __m512 w1 = _mm512_add_ps(_mm512_shuffle_f32x4(u[2], u[3], 0x88),
                                  _mm512_shuffle_f32x4(u[2], u[3], 0xDD));
  return _mm512_add_ps(_mm512_shuffle_f32x4(w0, w1, 0x88), _mm512_shuffle_f32x4(w0, w1, 0xDD));
}

// fp32 -> bf16 bits, round to nearest even (same as kv_f32_to_bf16, NaN kept quiet)
inline __m256i to_bf16(__m512 v) {
  const __m512i u = _mm512_castps_si512(v);
  const __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(1));
  __m512i r = _mm512_srli_epi32(_mm512_add_epi32(_mm512_add_epi32(u, _mm512_set1_epi32(0x7fff)), lsb), 16);
  const __mmask16 nan = _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
  r = _mm512_mask_or_epi32(r, nan, _mm512_srli_epi32(u, 16), _mm512_set1_epi32(0x40));
  return _mm512_cvtepi32_epi16(r);
}

template <bool BF16>
inline void store_tile(__m512 r, int i0, int j0, int nf, void* yb) {
  const __m512i iota = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  for (int ii = 0; ii < 4; ++ii) {
    const int i = i0 + ii;
    if (i >= nf) break;
    int cnt = i - j0;
    if (cnt <= 0) continue;
    if (cnt > 4) cnt = 4;
    const __m512 v = _mm512_permutexvar_ps(_mm512_add_epi32(iota, _mm512_set1_epi32(4 * ii)), r);
    const int64_t off = static_cast<int64_t>(i) * (i - 1) / 2 + j0;
    if (BF16)
      _mm256_mask_storeu_epi16(static_cast<uint16_t*>(yb) + off, static_cast<__mmask16>((1u << cnt) - 1u),
                               to_bf16(v));
    else
      _mm512_mask_storeu_ps(static_cast<float*>(yb) + off, static_cast<__mmask16>((1u << cnt) - 1u), v);
  }
}

#define KV_TILE_FMA(LOAD)                                                  \
  {                                                                        \
    __m512 xa[4], xb[4];                                                   \
    for (int q = 0; q < 4; ++q) xa[q] = LOAD(ri[q]);                       \
    for (int q = 0; q < 4; ++q) xb[q] = LOAD(rj[q]);                       \
    for (int ii = 0; ii < 4; ++ii)                                         \
      for (int jj = 0; jj < 4; ++jj)                                       \
        acc[4 * ii + jj] = _mm512_fmadd_ps(xa[ii], xb[jj], acc[4 * ii + jj]); \
  }

void sample_f32(const float* xs, int64_t rs, int nf, int64_t dim, float* ys) {
  const int64_t dfull = dim & ~int64_t(15);
  const __mmask16 tail = static_cast<__mmask16>((1u << (dim - dfull)) - 1u);
  for (int i0 = 0; i0 < nf; i0 += 4) {
    const float* ri[4];
    for (int q = 0; q < 4; ++q) ri[q] = xs + (i0 + q < nf ? i0 + q : nf - 1) * rs;
    for (int j0 = 0; j0 <= i0; j0 += 4) {
      const float* rj[4];
      for (int q = 0; q < 4; ++q) rj[q] = xs + (j0 + q < nf ? j0 + q : nf - 1) * rs;
      __m512 acc[16];
      for (int q = 0; q < 16; ++q) acc[q] = _mm512_setzero_ps();
      int64_t d = 0;
#define KV_LD(p) _mm512_loadu_ps((p) + d)
      for (; d < dfull; d += 16) KV_TILE_FMA(KV_LD)
#undef KV_LD
      if (tail) {
#define KV_LD(p) _mm512_maskz_loadu_ps(tail, (p) + d)
        KV_TILE_FMA(KV_LD)
#undef KV_LD
      }
      store_tile<false>(reduce16(acc), i0, j0, nf, ys);
    }
  }
}

void sample_bf16(const uint16_t* xs, int64_t rs, int nf, int64_t dim, uint16_t* ys) {
  for (int i0 = 0; i0 < nf; i0 += 4) {
    const uint16_t* ri[4];
    for (int q = 0; q < 4; ++q) ri[q] = xs + (i0 + q < nf ? i0 + q : nf - 1) * rs;
    for (int j0 = 0; j0 <= i0; j0 += 4) {
      const uint16_t* rj[4];
      for (int q = 0; q < 4; ++q) rj[q] = xs + (j0 + q < nf ? j0 + q : nf - 1) * rs;
      __m512 acc[16];
      for (int q = 0; q < 16; ++q) acc[q] = _mm512_setzero_ps();
#if defined(__AVX512BF16__)
      for (int64_t d = 0; d < dim; d += 32) {  // 32 bf16 per register, pairs summed
        const int64_t k = dim - d < 32 ? dim - d : 32;
        const __mmask32 m = k == 32 ? 0xffffffffu : static_cast<__mmask32>((1u << k) - 1u);
        __m512i xa[4], xb[4];
        for (int q = 0; q < 4; ++q) xa[q] = _mm512_maskz_loadu_epi16(m, ri[q] + d);
        for (int q = 0; q < 4; ++q) xb[q] = _mm512_maskz_loadu_epi16(m, rj[q] + d);
        for (int ii = 0; ii < 4; ++ii)
          for (int jj = 0; jj < 4; ++jj)
            acc[4 * ii + jj] =
                _mm512_dpbf16_ps(acc[4 * ii + jj], (__m512bh)xa[ii], (__m512bh)xb[jj]);
      }
#else
      for (int64_t d = 0; d < dim; d += 16) {  // widen bf16 to fp32 (exact), then FMA
        const int64_t k = dim - d < 16 ? dim - d : 16;
        const __mmask16 m = static_cast<__mmask16>(k == 16 ? 0xffffu : (1u << k) - 1u);
#define KV_LD(p) \
  _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(m, (p) + d)), 16))
        KV_TILE_FMA(KV_LD)
#undef KV_LD
      }
#endif
      store_tile<true>(reduce16(acc), i0, j0, nf, ys);
    }
  }
}

#undef KV_TILE_FMA

#else  // portable fallback

template <bool BF16>
void sample_scalar(const void* xs, int64_t rs, int nf, int64_t dim, void* ys) {
  auto ld = [&](int64_t k) {
    return BF16 ? kv_bf16_to_f32(static_cast<const uint16_t*>(xs)[k]) : static_cast<const float*>(xs)[k];
  };
  for (int i = 1; i < nf; ++i)
    for (int j = 0; j < i; ++j) {
      float s = 0.f;
      for (int64_t d = 0; d < dim; ++d) s += ld(i * rs + d) * ld(j * rs + d);
      const int64_t off = static_cast<int64_t>(i) * (i - 1) / 2 + j;
      if (BF16) static_cast<uint16_t*>(ys)[off] = kv_f32_to_bf16(s);
      else static_cast<float*>(ys)[off] = s;
    }
}

#endif

}  // namespace

extern "C" int kevolve_kernel(const kv_args* a) {
  const kv_tensor& x = a->inputs[0];
  const kv_tensor& out = a->outputs[0];
  if (x.dtype != out.dtype || (x.dtype != KV_F32 && x.dtype != KV_BF16)) return KV_ERR_UNSUPPORTED;
  const bool bf16 = x.dtype == KV_BF16;
  const int64_t nb = x.dims[0], dim = x.dims[2];
  const int nf = static_cast<int>(x.dims[1]);
  if (nf < 2 || dim < 1) return KV_OK;
#pragma omp parallel for schedule(static) num_threads(a->num_threads)
  for (int64_t b = 0; b < nb; ++b) {
#if defined(KV_DOT_AVX512)
    if (b + 1 < nb) {  // pull the next sample into L2 while this one computes
      const char* nx = static_cast<const char*>(x.data) + (b + 1) * x.strides[0] * (bf16 ? 2 : 4);
      const int64_t bytes = ((nf - 1) * x.strides[1] + dim) * (bf16 ? 2 : 4);
      for (int64_t o = 0; o < bytes; o += 64) _mm_prefetch(nx + o, _MM_HINT_T1);
    }
    if (bf16)
      sample_bf16(static_cast<const uint16_t*>(x.data) + b * x.strides[0], x.strides[1], nf, dim,
                  static_cast<uint16_t*>(out.data) + b * out.strides[0]);
    else
      sample_f32(static_cast<const float*>(x.data) + b * x.strides[0], x.strides[1], nf, dim,
                 static_cast<float*>(out.data) + b * out.strides[0]);
#else
    const int64_t es = bf16 ? 2 : 4;
    const void* xs = static_cast<const char*>(x.data) + b * x.strides[0] * es;
    void* ys = static_cast<char*>(out.data) + b * out.strides[0] * es;
    if (bf16) sample_scalar<true>(xs, x.strides[1], nf, dim, ys);
    else sample_scalar<false>(xs, x.strides[1], nf, dim, ys);
#endif
  }
  return KV_OK;
}
