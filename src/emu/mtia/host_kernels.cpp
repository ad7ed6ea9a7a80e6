// Host-vectorised inner loops (see host_kernels.h). Each has a portable
// version and, on x86, versions for wider vector units picked once at run
// time; tests/unit/emu/host_kernels_test.cpp holds them to the scalar
// definitions bit for bit.
#include "emu/mtia/host_kernels.h"

#include <cstring>

#include "emu/mtia/numerics.h"

#if defined(__x86_64__)
#include <immintrin.h>
#define KV_EMU_X86 1
#endif

namespace kevolve::emu::mtia {

namespace {

void widen_f16_scalar(const uint8_t* src, int64_t i, int64_t n, float* dst) {
  const float* t = f16_table();
  for (; i < n; ++i) {
    uint16_t h;
    std::memcpy(&h, src + 2 * i, 2);
    dst[i] = t[h];
  }
}

void narrow_f16_scalar(const float* src, int64_t i, int64_t n, uint8_t* dst) {
  for (; i < n; ++i) {
    const uint16_t h = kv_f32_to_f16(src[i]);
    std::memcpy(dst + 2 * i, &h, 2);
  }
}

// Vectors of 4, 8 and 16 floats (GCC vector extensions: plain mul and add
// per lane, lowered to whatever the enclosing function's target has).
typedef float v4 __attribute__((vector_size(16)));
typedef float v8 __attribute__((vector_size(32)));
typedef float v16 __attribute__((vector_size(64)));

template <class V>
inline __attribute__((always_inline)) void load(V& v, const float* p) {
  std::memcpy(&v, p, sizeof v);
}
template <class V>
inline __attribute__((always_inline)) void store(float* p, const V& v) {
  std::memcpy(p, &v, sizeof v);
}

// R rows x C vectors of columns of o, held in registers across the k loop;
// each lane adds its products in kk order, as the scalar definition does.
template <class V, int R, int C>
inline __attribute__((always_inline)) void mm_block(const float* a, const float* b, int32_t k, int32_t n, float* o) {
  constexpr int L = sizeof(V) / sizeof(float);
  V acc[R][C];
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < C; ++c) load(acc[r][c], o + size_t(r) * n + c * L);
  for (int32_t kk = 0; kk < k; ++kk) {
    V bv[C];
    for (int c = 0; c < C; ++c) load(bv[c], b + size_t(kk) * n + c * L);
    for (int r = 0; r < R; ++r) {
      const float av = a[size_t(r) * k + kk];
      for (int c = 0; c < C; ++c) acc[r][c] += av * bv[c];
    }
  }
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < C; ++c) store(o + size_t(r) * n + c * L, acc[r][c]);
}

// R rows of o: vector blocks of 2 and 1, then single columns.
template <class V, int R>
inline __attribute__((always_inline)) void mm_band(const float* a, const float* b, int32_t k, int32_t n, float* o) {
  constexpr int32_t L = sizeof(V) / sizeof(float);
  int32_t j = 0;
  for (; j + 2 * L <= n; j += 2 * L) mm_block<V, R, 2>(a, b + j, k, n, o + j);
  for (; j + L <= n; j += L) mm_block<V, R, 1>(a, b + j, k, n, o + j);
  for (; j < n; ++j)
    for (int r = 0; r < R; ++r) {
      float acc = o[size_t(r) * n + j];
      for (int32_t kk = 0; kk < k; ++kk) acc += a[size_t(r) * k + kk] * b[size_t(kk) * n + j];
      o[size_t(r) * n + j] = acc;
    }
}

template <class V, int R>
inline __attribute__((always_inline)) void mm_all(const float* a, const float* b, int32_t m, int32_t k, int32_t n,
                                                  float* o) {
  int32_t i = 0;
  for (; i + R <= m; i += R) mm_band<V, R>(a + size_t(i) * k, b, k, n, o + size_t(i) * n);
  for (; i < m; ++i) mm_band<V, 1>(a + size_t(i) * k, b, k, n, o + size_t(i) * n);
}

void mm_portable(const float* a, const float* b, int32_t m, int32_t k, int32_t n, float* o) {
  mm_all<v4, 4>(a, b, m, k, n, o);
}

#ifdef KV_EMU_X86
__attribute__((target("avx2"))) void mm_avx2(const float* a, const float* b, int32_t m, int32_t k, int32_t n,
                                             float* o) {
  mm_all<v8, 4>(a, b, m, k, n, o);
}

__attribute__((target("avx512f"))) void mm_avx512(const float* a, const float* b, int32_t m, int32_t k, int32_t n,
                                                  float* o) {
  mm_all<v16, 4>(a, b, m, k, n, o);
}

// 0: portable, 1: AVX2 + F16C, 2: and AVX-512F.
int f16_level() {
  static const int level = !(__builtin_cpu_supports("avx2") && __builtin_cpu_supports("f16c")) ? 0
                           : __builtin_cpu_supports("avx512f")                                   ? 2
                                                                                                 : 1;
  return level;
}

// Eight at a time through the hardware conversion; a group with an Inf or
// NaN goes through the scalar definition (which keeps NaN payloads as they
// are), so the bits are the definition's either way.
__attribute__((target("avx2,f16c"))) void widen_f16_x86_checked(const uint8_t* src, int64_t n, float* dst) {
  const __m128i exp_mask = _mm_set1_epi16(0x7c00);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + 2 * i));
    const __m128i special = _mm_cmpeq_epi16(_mm_and_si128(h, exp_mask), exp_mask);
    if (_mm_movemask_epi8(special)) widen_f16_scalar(src, i, i + 8, dst);
    else _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(h));
  }
  widen_f16_scalar(src, i, n, dst);
}

// Optimistic passes: convert everything, tracking the largest magnitude
// (an Inf or NaN is >= 0x7c00); if there was one, convert again with the
// per-group check above.
__attribute__((target("avx2,f16c"))) void widen_f16_x86(const uint8_t* src, int64_t n, float* dst) {
  const __m128i abs_mask = _mm_set1_epi16(0x7fff);
  __m128i top = _mm_setzero_si128();
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + 2 * i));
    top = _mm_max_epu16(top, _mm_and_si128(h, abs_mask));
    _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(h));
  }
  if (_mm_movemask_epi8(_mm_cmpeq_epi16(_mm_max_epu16(top, _mm_set1_epi16(0x7c00)), top)))
    return widen_f16_x86_checked(src, n, dst);
  widen_f16_scalar(src, i, n, dst);
}

// The same sixteen at a time.
__attribute__((target("avx512f,avx2,f16c"))) void widen_f16_x86_512(const uint8_t* src, int64_t n, float* dst) {
  const __m256i abs_mask = _mm256_set1_epi16(0x7fff);
  __m256i top = _mm256_setzero_si256();
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + 2 * i));
    top = _mm256_max_epu16(top, _mm256_and_si256(h, abs_mask));
    _mm512_storeu_ps(dst + i, _mm512_maskz_cvtph_ps(0xffff, h));  // (the unmasked form warns in GCC 12)
  }
  if (_mm256_movemask_epi8(_mm256_cmpeq_epi16(_mm256_max_epu16(top, _mm256_set1_epi16(0x7c00)), top)))
    return widen_f16_x86_checked(src, n, dst);
  widen_f16_scalar(src, i, n, dst);
}

// The hardware rounds to nearest even like kv_f32_to_f16; a group with a NaN
// goes through the scalar definition (one quiet NaN, not the payload).
__attribute__((target("avx2,f16c"))) void narrow_f16_x86(const float* src, int64_t n, uint8_t* dst) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 f = _mm256_loadu_ps(src + i);
    if (_mm256_movemask_ps(_mm256_cmp_ps(f, f, _CMP_UNORD_Q))) narrow_f16_scalar(src, i, i + 8, dst);
    else _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + 2 * i), _mm256_cvtps_ph(f, _MM_FROUND_TO_NEAREST_INT));
  }
  narrow_f16_scalar(src, i, n, dst);
}
#endif

using mm_fn = void (*)(const float*, const float*, int32_t, int32_t, int32_t, float*);

mm_fn pick_mm() {
#ifdef KV_EMU_X86
  if (__builtin_cpu_supports("avx512f")) return mm_avx512;
  if (__builtin_cpu_supports("avx2")) return mm_avx2;
#endif
  return mm_portable;
}

}  // namespace

void widen_f16(const uint8_t* src, int64_t n, float* dst) {
#ifdef KV_EMU_X86
  if (f16_level() == 2) return widen_f16_x86_512(src, n, dst);
  if (f16_level() == 1) return widen_f16_x86(src, n, dst);
#endif
  widen_f16_scalar(src, 0, n, dst);
}

void narrow_f16(const float* src, int64_t n, uint8_t* dst) {
#ifdef KV_EMU_X86
  if (f16_level() > 0) return narrow_f16_x86(src, n, dst);
#endif
  narrow_f16_scalar(src, 0, n, dst);
}

void mm_tile(const float* a, const float* b, int32_t m, int32_t k, int32_t n, float* o) {
  static const mm_fn fn = pick_mm();
  fn(a, b, m, k, n, o);
}

}  // namespace kevolve::emu::mtia
