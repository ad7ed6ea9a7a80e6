// exp_row: the SE's EXP on a row, with the bits of the host's libm expf.
//
// On x86 with AVX2 and FMA, glibc's expf is __expf_fma: the table-driven
// algorithm of ARM's optimized-routines (e_expf.c, exp2f_data with 32 table
// entries and a degree-3 polynomial in double), compiled with fused
// multiply-adds. The vector path below does exactly the same double
// operations per lane, with the same fusions, constants and conversions, so
// every finite input below 88 in magnitude gets the same bits; lanes outside
// that range (overflow, underflow, Inf, NaN) go through libm itself.
// Checked once per process against libm on a sample of inputs before it is
// used (any difference: libm for the whole run), and exhaustively over all
// 2^32 inputs by the tool tests/unit/emu/exp_exhaustive.cpp.
#include <cmath>
#include <cstdint>
#include <cstring>

#include "emu/mtia/host_kernels.h"

#if defined(__x86_64__)
#include <immintrin.h>
#define KV_EMU_X86 1
#endif

namespace kevolve::emu::mtia {

namespace {

void exp_row_libm(float* v, int32_t i, int32_t n) {
  for (; i < n; ++i) v[i] = std::exp(v[i]);
}

#ifdef KV_EMU_X86
// glibc's __exp2f_data (math/e_exp2f_data.c), bit patterns: tab[i] =
// asuint64(2^(i/32)) - (i << 47); invln2_scaled = 32/ln 2; the polynomial
// scaled by 1/32^k; the rounding shift 0x1.8p52.
alignas(64) constexpr uint64_t exp_tab[32] = {
    0x3ff0000000000000, 0x3fefd9b0d3158574, 0x3fefb5586cf9890f, 0x3fef9301d0125b51, 0x3fef72b83c7d517b,
    0x3fef54873168b9aa, 0x3fef387a6e756238, 0x3fef1e9df51fdee1, 0x3fef06fe0a31b715, 0x3feef1a7373aa9cb,
    0x3feedea64c123422, 0x3feece086061892d, 0x3feebfdad5362a27, 0x3feeb42b569d4f82, 0x3feeab07dd485429,
    0x3feea47eb03a5585, 0x3feea09e667f3bcd, 0x3fee9f75e8ec5f74, 0x3feea11473eb0187, 0x3feea589994cce13,
    0x3feeace5422aa0db, 0x3feeb737b0cdc5e5, 0x3feec49182a3f090, 0x3feed503b23e255d, 0x3feee89f995ad3ad,
    0x3feeff76f2fb5e47, 0x3fef199bdd85529c, 0x3fef3720dcef9069, 0x3fef5818dcfba487, 0x3fef7c97337b9b5f,
    0x3fefa4afa2a490da, 0x3fefd0765b6e4540};
constexpr uint64_t exp_invln2n = 0x40471547652b82fe, exp_shift = 0x4338000000000000;
constexpr uint64_t exp_c0 = 0x3ebc6af84b912394, exp_c1 = 0x3f2ebfce50fac4f3, exp_c2 = 0x3f962e42ff0c52d6;

// e_expf.c's main path on four lanes, operation for operation as
// __expf_fma: z = fma(invln2n, x, shift); k = bits(z); kd = z - shift;
// r = fma(invln2n, x, -kd); s = asdouble(tab[k % 32] + (k << 47));
// y = fma(fma(c0, r, c1), r * r, fma(c2, r, 1)) * s; rounded to float.
__attribute__((target("avx2,fma"))) inline __m128 exp4(__m128 x) {
  const __m256d xd = _mm256_cvtps_pd(x);
  const __m256d invln2n = _mm256_castsi256_pd(_mm256_set1_epi64x(exp_invln2n));
  const __m256d shift = _mm256_castsi256_pd(_mm256_set1_epi64x(exp_shift));
  const __m256d z = _mm256_fmadd_pd(invln2n, xd, shift);
  const __m256i ki = _mm256_castpd_si256(z);
  const __m256d kd = _mm256_sub_pd(z, shift);
  const __m256d r = _mm256_fmsub_pd(invln2n, xd, kd);
  const __m256i idx = _mm256_and_si256(ki, _mm256_set1_epi64x(31));
  const __m256i t = _mm256_add_epi64(_mm256_i64gather_epi64(reinterpret_cast<const long long*>(exp_tab), idx, 8),
                                     _mm256_slli_epi64(ki, 47));
  const __m256d c0 = _mm256_castsi256_pd(_mm256_set1_epi64x(exp_c0));
  const __m256d c1 = _mm256_castsi256_pd(_mm256_set1_epi64x(exp_c1));
  const __m256d c2 = _mm256_castsi256_pd(_mm256_set1_epi64x(exp_c2));
  const __m256d zz = _mm256_fmadd_pd(r, c0, c1);
  const __m256d r2 = _mm256_mul_pd(r, r);
  __m256d y = _mm256_fmadd_pd(r, c2, _mm256_set1_pd(1.0));
  y = _mm256_fmadd_pd(zz, r2, y);
  return _mm256_cvtpd_ps(_mm256_mul_pd(y, _mm256_castsi256_pd(t)));
}

// Eight at a time; a group with a lane of magnitude >= 88 (e_expf.c's
// special-case test, abstop >= top12(88)) or a NaN goes through libm.
__attribute__((target("avx2,fma"))) void exp_row_fma(float* v, int32_t n) {
  const __m256i abs_mask = _mm256_set1_epi32(0x7fffffff), limit = _mm256_set1_epi32(0x42afffff);
  int32_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 x = _mm256_loadu_ps(v + i);
    const __m256i big = _mm256_cmpgt_epi32(_mm256_and_si256(_mm256_castps_si256(x), abs_mask), limit);
    if (_mm256_movemask_epi8(big)) {
      exp_row_libm(v, i, i + 8);
      continue;
    }
    const __m128 lo = exp4(_mm256_castps256_ps128(x)), hi = exp4(_mm256_extractf128_ps(x, 1));
    _mm256_storeu_ps(v + i, _mm256_set_m128(hi, lo));
  }
  exp_row_libm(v, i, n);
}

// The same on eight lanes (AVX-512), sixteen at a time. (The masked forms
// of the intrinsics: GCC 12 warns on the unmasked ones.)
__attribute__((target("avx512f,avx2,fma"))) inline __m256 exp8(__m256 x) {
  const __m512d xd = _mm512_maskz_cvtps_pd(0xff, x);
  const __m512d invln2n = _mm512_castsi512_pd(_mm512_set1_epi64(exp_invln2n));
  const __m512d shift = _mm512_castsi512_pd(_mm512_set1_epi64(exp_shift));
  const __m512d z = _mm512_fmadd_pd(invln2n, xd, shift);
  const __m512i ki = _mm512_castpd_si512(z);
  const __m512d kd = _mm512_sub_pd(z, shift);
  const __m512d r = _mm512_fmsub_pd(invln2n, xd, kd);
  const __m512i idx = _mm512_and_si512(ki, _mm512_set1_epi64(31));
  // tab[idx]: two 16-entry permutes, picked by bit 4 of the index.
  const __m512i* tab = reinterpret_cast<const __m512i*>(exp_tab);
  const __m512i lo16 = _mm512_permutex2var_epi64(_mm512_load_si512(tab), idx, _mm512_load_si512(tab + 1));
  const __m512i hi16 = _mm512_permutex2var_epi64(_mm512_load_si512(tab + 2), idx, _mm512_load_si512(tab + 3));
  const __m512i entry = _mm512_mask_blend_epi64(_mm512_test_epi64_mask(idx, _mm512_set1_epi64(16)), lo16, hi16);
  const __m512i t = _mm512_add_epi64(entry, _mm512_maskz_slli_epi64(0xff, ki, 47));
  const __m512d zz = _mm512_fmadd_pd(r, _mm512_castsi512_pd(_mm512_set1_epi64(exp_c0)),
                                     _mm512_castsi512_pd(_mm512_set1_epi64(exp_c1)));
  const __m512d r2 = _mm512_mul_pd(r, r);
  __m512d y = _mm512_fmadd_pd(r, _mm512_castsi512_pd(_mm512_set1_epi64(exp_c2)), _mm512_set1_pd(1.0));
  y = _mm512_fmadd_pd(zz, r2, y);
  return _mm512_maskz_cvtpd_ps(0xff, _mm512_mul_pd(y, _mm512_castsi512_pd(t)));
}

__attribute__((target("avx512f,avx2,fma"))) void exp_row_512(float* v, int32_t n) {
  const __m512i abs_mask = _mm512_set1_epi32(0x7fffffff), limit = _mm512_set1_epi32(0x42afffff);
  int32_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m512 x = _mm512_loadu_ps(v + i);
    if (_mm512_cmpgt_epi32_mask(_mm512_and_si512(_mm512_castps_si512(x), abs_mask), limit)) {
      exp_row_libm(v, i, i + 16);
      continue;
    }
    const __m256 lo = exp8(_mm256_loadu_ps(v + i)), hi = exp8(_mm256_loadu_ps(v + i + 8));
    _mm256_storeu_ps(v + i, lo);
    _mm256_storeu_ps(v + i + 8, hi);
  }
  exp_row_fma(v + i, n - i);
}

using exp_fn = void (*)(float*, int32_t);

// The vector path agrees with libm on a sample: every (2^18 - 1)-th bit
// pattern (both signs, all exponents) with neighbours, and quarter steps
// over [-100, 100), sixteen lanes a call (the widest path's group).
bool matches_libm(exp_fn fn) {
  constexpr int L = 16;
  float in[L], out[L];
  auto check = [&] {
    std::memcpy(out, in, sizeof in);
    fn(out, L);
    for (int j = 0; j < L; ++j) {
      const float want = std::exp(in[j]);
      if (std::memcmp(&want, &out[j], 4) != 0) return false;
    }
    return true;
  };
  for (uint64_t b = 0; b < (uint64_t(1) << 32); b += (uint64_t(1) << 18) - 1) {
    for (int j = 0; j < L; ++j) {
      const uint32_t bits = static_cast<uint32_t>(b + uint64_t(j) * 7919);
      std::memcpy(&in[j], &bits, 4);
    }
    if (!check()) return false;
  }
  for (int j = -400; j < 400; j += L) {
    for (int l = 0; l < L; ++l) in[l] = static_cast<float>(j + l) * 0.25f;
    if (!check()) return false;
  }
  return true;
}

exp_fn pick_exp() {
  if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma")) return nullptr;
  const exp_fn fn = __builtin_cpu_supports("avx512f") ? exp_row_512 : exp_row_fma;
  return matches_libm(fn) ? fn : nullptr;
}

// The path every exp_row takes in this process, chosen and checked once.
exp_fn chosen() {
  static const exp_fn fn = pick_exp();
  return fn;
}
#endif

}  // namespace

bool exp_row_vectorised() {
#ifdef KV_EMU_X86
  return chosen() != nullptr;
#else
  return false;
#endif
}

void exp_row(float* v, int32_t n) {
#ifdef KV_EMU_X86
  if (const exp_fn fn = chosen()) return fn(v, n);
#endif
  exp_row_libm(v, 0, n);
}

}  // namespace kevolve::emu::mtia
