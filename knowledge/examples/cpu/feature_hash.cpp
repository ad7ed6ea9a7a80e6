// Example kernel: feature_hash (ids[N] int64 -> out[N] int64,
// out = fmix64((uint64)id ^ salt) mod table_size).
//
// What makes it fast:
//  * fmix64 runs 8 lanes at a time with AVX-512DQ's 64-bit multiply (vpmullq).
//  * The modulo by the run-time table size has no vector instruction; it is computed
//    exactly with doubles instead of a 64-bit divide per element:
//      q1 = floor(double(h) * (1/d))   (off from h/d by at most ~2^12/d + 1)
//      r1 = h - q1*d                    (|r1| <= d + 2^13, exact in int64)
//      q2 = floor(double(r1) * (1/d)); r = r1 - q2*d, then one +-d fix-up.
//    This is exact for every h in [0, 2^64) and 1 <= d <= 2^53 (the operator's range).
//  * 64 MiB of output per 8M ids goes out with streaming stores (no read-for-ownership);
//    the head up to a 64-byte boundary and the tail use masked stores.
#include <cstdint>
#include <omp.h>
#include "kevolve/abi.h"
#if defined(__AVX512F__) && defined(__AVX512DQ__)
// gcc 12 reports -Wmaybe-uninitialized inside its own AVX-512 headers (their
// _mm512_undefined_*() placeholders); silence it for the header text only.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop
#define KV_HASH_AVX512 1
#endif

namespace {

inline uint64_t fmix64(uint64_t k) {
  k ^= k >> 33;
  k *= 0xff51afd7ed558ccdULL;
  k ^= k >> 33;
  k *= 0xc4ceb9fe1a85ec53ULL;
  k ^= k >> 33;
  return k;
}

#if defined(KV_HASH_AVX512)

struct Mod {
  __m512i d, salt;
  __m512d inv, qmax;
};

inline __m512i hash8(__m512i id, const Mod& m) {
  __m512i k = _mm512_xor_si512(id, m.salt);
  k = _mm512_xor_si512(k, _mm512_srli_epi64(k, 33));
  k = _mm512_mullo_epi64(k, _mm512_set1_epi64(static_cast<long long>(0xff51afd7ed558ccdULL)));
  k = _mm512_xor_si512(k, _mm512_srli_epi64(k, 33));
  k = _mm512_mullo_epi64(k, _mm512_set1_epi64(static_cast<long long>(0xc4ceb9fe1a85ec53ULL)));
  k = _mm512_xor_si512(k, _mm512_srli_epi64(k, 33));
  // k mod d, exactly (see the header comment)
  __m512d q = _mm512_mul_pd(_mm512_cvtepu64_pd(k), m.inv);
  q = _mm512_min_pd(_mm512_roundscale_pd(q, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC), m.qmax);
  const __m512i r1 = _mm512_sub_epi64(k, _mm512_mullo_epi64(_mm512_cvttpd_epu64(q), m.d));
  const __m512d q2 = _mm512_roundscale_pd(_mm512_mul_pd(_mm512_cvtepi64_pd(r1), m.inv),
                                          _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
  __m512i r = _mm512_sub_epi64(r1, _mm512_mullo_epi64(_mm512_cvttpd_epi64(q2), m.d));
  r = _mm512_mask_add_epi64(r, _mm512_cmplt_epi64_mask(r, _mm512_setzero_si512()), r, m.d);
  r = _mm512_mask_sub_epi64(r, _mm512_cmpge_epi64_mask(r, m.d), r, m.d);
  return r;
}

void run_range(const int64_t* ids, int64_t* y, int64_t i0, int64_t i1, const Mod& m) {
  int64_t i = i0;
  const int64_t mis = static_cast<int64_t>(reinterpret_cast<uintptr_t>(y + i) & 63) / 8;
  int64_t head = mis ? 8 - mis : 0;
  if (head > i1 - i) head = i1 - i;
  if (head > 0) {
    const __mmask8 k = static_cast<__mmask8>((1u << head) - 1u);
    _mm512_mask_storeu_epi64(y + i, k, hash8(_mm512_maskz_loadu_epi64(k, ids + i), m));
    i += head;
  }
  if ((reinterpret_cast<uintptr_t>(y + i) & 63) == 0) {
    for (; i + 32 <= i1; i += 32) {
      const __m512i a0 = hash8(_mm512_loadu_si512(ids + i), m);
      const __m512i a1 = hash8(_mm512_loadu_si512(ids + i + 8), m);
      const __m512i a2 = hash8(_mm512_loadu_si512(ids + i + 16), m);
      const __m512i a3 = hash8(_mm512_loadu_si512(ids + i + 24), m);
      _mm512_stream_si512(reinterpret_cast<__m512i*>(y + i), a0);
      _mm512_stream_si512(reinterpret_cast<__m512i*>(y + i + 8), a1);
      _mm512_stream_si512(reinterpret_cast<__m512i*>(y + i + 16), a2);
      _mm512_stream_si512(reinterpret_cast<__m512i*>(y + i + 24), a3);
    }
  }
  for (; i + 8 <= i1; i += 8) _mm512_storeu_si512(y + i, hash8(_mm512_loadu_si512(ids + i), m));
  if (i < i1) {
    const __mmask8 k = static_cast<__mmask8>((1u << (i1 - i)) - 1u);
    _mm512_mask_storeu_epi64(y + i, k, hash8(_mm512_maskz_loadu_epi64(k, ids + i), m));
  }
  _mm_sfence();
}

#endif

}  // namespace

extern "C" int kevolve_kernel(const kv_args* a) {
  const int64_t n = a->inputs[0].dims[0];
  const int64_t* ids = static_cast<const int64_t*>(a->inputs[0].data);
  int64_t* y = static_cast<int64_t*>(a->outputs[0].data);
  const int64_t table_size = kv_param_i(a, 0);
  const uint64_t salt = static_cast<uint64_t>(kv_param_i(a, 1));
  if (table_size < 1) return KV_ERR_UNSUPPORTED;
  const uint64_t d = static_cast<uint64_t>(table_size);
#if defined(KV_HASH_AVX512)
  if (d <= (1ULL << 53)) {
    Mod m;
    m.d = _mm512_set1_epi64(static_cast<long long>(d));
    m.salt = _mm512_set1_epi64(static_cast<long long>(salt));
    m.inv = _mm512_set1_pd(1.0 / static_cast<double>(d));
    m.qmax = _mm512_set1_pd(18446744073709549568.0);  // largest double below 2^64
#pragma omp parallel num_threads(a->num_threads)
    {
      const int64_t nt = omp_get_num_threads(), t = omp_get_thread_num();
      const int64_t blocks = (n + 7) / 8;  // split on 8-element (64-byte) boundaries
      const int64_t i0 = blocks * t / nt * 8;
      int64_t i1 = blocks * (t + 1) / nt * 8;
      if (i1 > n) i1 = n;
      if (i0 < i1) run_range(ids, y, i0, i1, m);
    }
    return KV_OK;
  }
#endif
#pragma omp parallel for num_threads(a->num_threads)
  for (int64_t i = 0; i < n; ++i)
    y[i] = static_cast<int64_t>(fmix64(static_cast<uint64_t>(ids[i]) ^ salt) % d);
  return KV_OK;
}
