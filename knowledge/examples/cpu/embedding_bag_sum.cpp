// Example kernel: embedding_bag_sum (table[E,D] fp32|fp16, indices[NNZ], offsets[B+1]
// -> out[B,D]).
//
// What makes it fast:
//  * Threads split the bags by work (indices + a constant per bag), found by a binary
//    search on offsets, not by bag count: skewed pooling factors stay balanced.
//  * Rows are prefetched kPF indices ahead in the flat index stream of the thread,
//    across bag boundaries: uniform ids miss every cache, and the gather is latency-bound.
//  * A bag's sum lives in zmm registers, D up to 256 columns per pass (two partial sums
//    for D <= 128 so that the add chains overlap); fp16 rows convert with vcvtph2ps and
//    the sum is rounded once with vcvtps2ph (round to nearest even).
#include <cstdint>
#include <omp.h>
#include "kevolve/abi.h"
#if defined(__AVX512F__)
// gcc 12 reports -Wmaybe-uninitialized inside its own AVX-512 headers (their
// _mm512_undefined_*() placeholders); silence it for the header text only.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop
#endif

namespace {

constexpr int64_t kBagCost = 4;  // per-bag overhead, in units of one index, for balancing
constexpr int64_t kPF = 24;      // prefetch distance, in indices

// First bag b in [0, nbags] with offsets[b] + b * kBagCost >= target.
int64_t split_point(const int64_t* off, int64_t nbags, int64_t target) {
  int64_t lo = 0, hi = nbags;
  while (lo < hi) {
    const int64_t mid = lo + (hi - lo) / 2;
    if (off[mid] + mid * kBagCost < target) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

#if defined(__AVX512F__)

inline void prefetch_row(const char* p, int64_t bytes) {
  for (int64_t o = 0; o < bytes; o += 64) _mm_prefetch(p + o, _MM_HINT_T0);
  _mm_prefetch(p + bytes - 1, _MM_HINT_T0);
}

template <bool F16>
inline __m512 load16(const void* base, int64_t off, __mmask16 m) {
  if (F16)
    return _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(m, static_cast<const uint16_t*>(base) + off));
  return _mm512_maskz_loadu_ps(m, static_cast<const float*>(base) + off);
}

template <bool F16>
inline void store16(void* base, int64_t off, __m512 v, __mmask16 m) {
  if (F16)
    _mm256_mask_storeu_epi16(static_cast<uint16_t*>(base) + off, m,
                             _mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
  else
    _mm512_mask_storeu_ps(static_cast<float*>(base) + off, m, v);
}

struct Ctx {
  const void* table;
  int64_t row_stride;  // elements
  const int64_t* idx;
  const int64_t* off;
  void* out;
  int64_t out_stride;  // elements
  int64_t dim;
  int64_t row_bytes;
  int64_t esize;
};

// Sums columns [d0, d0 + 16*NV) (last vector masked by `tail`) of bags [b0, b1).
// k_end bounds the prefetch stream.
template <bool F16, int NV>
void bags_chunk(const Ctx& c, int64_t b0, int64_t b1, int64_t d0, __mmask16 tail, bool pf,
                int64_t k_end) {
  constexpr bool kDual = NV <= 8;
  const char* tbytes = static_cast<const char*>(c.table);
  for (int64_t b = b0; b < b1; ++b) {
    const int64_t kb = c.off[b], ke = c.off[b + 1];
    __m512 acc[NV], acc2[kDual ? NV : 1];
    for (int v = 0; v < NV; ++v) acc[v] = _mm512_setzero_ps();
    for (int v = 0; v < (kDual ? NV : 1); ++v) acc2[v] = _mm512_setzero_ps();
    int64_t k = kb;
    if (kDual) {
      for (; k + 1 < ke; k += 2) {
        if (pf && k + 1 + kPF < k_end) {
          prefetch_row(tbytes + c.idx[k + kPF] * c.row_stride * c.esize, c.row_bytes);
          prefetch_row(tbytes + c.idx[k + 1 + kPF] * c.row_stride * c.esize, c.row_bytes);
        }
        const int64_t r0 = c.idx[k] * c.row_stride + d0;
        const int64_t r1 = c.idx[k + 1] * c.row_stride + d0;
        for (int v = 0; v < NV; ++v) {
          const __mmask16 m = v == NV - 1 ? tail : (__mmask16)0xffff;
          acc[v] = _mm512_add_ps(acc[v], load16<F16>(c.table, r0 + 16 * v, m));
          acc2[v] = _mm512_add_ps(acc2[v], load16<F16>(c.table, r1 + 16 * v, m));
        }
      }
    }
    for (; k < ke; ++k) {
      if (pf && k + kPF < k_end)
        prefetch_row(tbytes + c.idx[k + kPF] * c.row_stride * c.esize, c.row_bytes);
      const int64_t r0 = c.idx[k] * c.row_stride + d0;
      for (int v = 0; v < NV; ++v) {
        const __mmask16 m = v == NV - 1 ? tail : (__mmask16)0xffff;
        acc[v] = _mm512_add_ps(acc[v], load16<F16>(c.table, r0 + 16 * v, m));
      }
    }
    const int64_t yo = b * c.out_stride + d0;
    for (int v = 0; v < NV; ++v) {
      const __mmask16 m = v == NV - 1 ? tail : (__mmask16)0xffff;
      const __m512 s = kDual ? _mm512_add_ps(acc[v], acc2[kDual ? v : 0]) : acc[v];
      store16<F16>(c.out, yo + 16 * v, s, m);
    }
  }
}

template <bool F16>
void bags(const Ctx& c, int64_t b0, int64_t b1) {
  if (b0 >= b1) return;
  const int64_t k_end = c.off[b1];
  for (int64_t d0 = 0; d0 < c.dim; d0 += 256) {
    const int64_t w = c.dim - d0 < 256 ? c.dim - d0 : 256;
    const int nv = static_cast<int>((w + 15) / 16);
    const int rem = static_cast<int>(w - 16 * (nv - 1));
    const __mmask16 tail = static_cast<__mmask16>(rem == 16 ? 0xffffu : ((1u << rem) - 1u));
    const bool pf = d0 == 0;
    switch (nv) {
#define KV_CASE(N) \
  case N: bags_chunk<F16, N>(c, b0, b1, d0, tail, pf, k_end); break;
      KV_CASE(1) KV_CASE(2) KV_CASE(3) KV_CASE(4) KV_CASE(5) KV_CASE(6) KV_CASE(7) KV_CASE(8)
      KV_CASE(9) KV_CASE(10) KV_CASE(11) KV_CASE(12) KV_CASE(13) KV_CASE(14) KV_CASE(15)
      KV_CASE(16)
#undef KV_CASE
      default: break;
    }
  }
}

#else  // portable fallback

template <bool F16>
void bags_scalar(const kv_args* a, int64_t b0, int64_t b1) {
  const kv_tensor& table = a->inputs[0];
  const kv_tensor& out = a->outputs[0];
  const int64_t* ip = static_cast<const int64_t*>(a->inputs[1].data);
  const int64_t* op = static_cast<const int64_t*>(a->inputs[2].data);
  const int64_t dim = out.dims[1];
  for (int64_t b = b0; b < b1; ++b)
    for (int64_t d0 = 0; d0 < dim; d0 += 64) {
      float acc[64] = {};
      const int64_t n = dim - d0 < 64 ? dim - d0 : 64;
      for (int64_t k = op[b]; k < op[b + 1]; ++k) {
        const int64_t r = ip[k] * table.strides[0] + d0;
        for (int64_t d = 0; d < n; ++d)
          acc[d] += F16 ? kv_f16_to_f32(static_cast<const uint16_t*>(table.data)[r + d])
                        : static_cast<const float*>(table.data)[r + d];
      }
      const int64_t yo = b * out.strides[0] + d0;
      for (int64_t d = 0; d < n; ++d) {
        if (F16) static_cast<uint16_t*>(out.data)[yo + d] = kv_f32_to_f16(acc[d]);
        else static_cast<float*>(out.data)[yo + d] = acc[d];
      }
    }
}

#endif

}  // namespace

extern "C" int kevolve_kernel(const kv_args* a) {
  const kv_tensor& table = a->inputs[0];
  const kv_tensor& out = a->outputs[0];
  if (table.dtype != out.dtype || (table.dtype != KV_F32 && table.dtype != KV_F16))
    return KV_ERR_UNSUPPORTED;
  const bool f16 = table.dtype == KV_F16;
  const int64_t nbags = out.dims[0], dim = out.dims[1];
  if (nbags <= 0 || dim <= 0) return KV_OK;
  const int64_t* op = static_cast<const int64_t*>(a->inputs[2].data);
  const int64_t total_work = op[nbags] + nbags * kBagCost;
#if defined(__AVX512F__)
  Ctx c;
  c.table = table.data;
  c.row_stride = table.strides[0];
  c.idx = static_cast<const int64_t*>(a->inputs[1].data);
  c.off = op;
  c.out = out.data;
  c.out_stride = out.strides[0];
  c.dim = dim;
  c.esize = f16 ? 2 : 4;
  c.row_bytes = dim * c.esize;
#endif
#pragma omp parallel num_threads(a->num_threads)
  {
    const int64_t nt = omp_get_num_threads(), t = omp_get_thread_num();
    const int64_t b0 = split_point(op, nbags, total_work * t / nt);
    const int64_t b1 = t + 1 == nt ? nbags : split_point(op, nbags, total_work * (t + 1) / nt);
#if defined(__AVX512F__)
    if (f16) bags<true>(c, b0, b1);
    else bags<false>(c, b0, b1);
#else
    if (f16) bags_scalar<true>(a, b0, b1);
    else bags_scalar<false>(a, b0, b1);
#endif
  }
  return KV_OK;
}
