// Example kernel: bucketize (x[N] fp32, boundaries[NB] fp32 ascending -> out[N] int32,
// out[i] = #{j : boundaries[j] < x[i]}, i.e. std::lower_bound).
//
// What makes it fast:
//  * A uniform grid over [boundaries[0], boundaries[NB-1]] (G = 4*NB cells, at most
//    16384, built in args->workspace on every call) maps x to a cell
//    c = clamp(trunc((x - b0) * scale), 0, G-1). That map is monotone in x, so with
//    start[c] = #{j : cell(b_j) < c} the answer for x in cell c lies in
//    [start[c], start[c+1]]: only the boundaries of cell c need comparing. This holds for
//    ANY sorted boundaries (clustered ones only make cells fuller, i.e. slower); the
//    cells of the boundaries are computed by the very same vector code as those of x,
//    so both sides agree bit for bit.
//  * 16 lanes at a time: two gathers fetch start[c] and start[c+1], then a branch-free
//    per-lane binary search over the cell runs a FIXED number of steps (enough for the
//    fullest cell, 2-3 for uniform boundaries): no data-dependent branch, and four
//    16-lane groups are interleaved so that their gather latencies overlap. Gathers
//    cost about one cycle per lane on Zen 5, so the count of gathered lanes is the cost.
//  * Degenerate boundaries (one value, non-finite ends, too little workspace) use a
//    single cell holding all of them: the same loop is then a vectorized binary search.
//  * Results go out with streaming stores (aligned body, masked head and tail).
#include <cmath>
#include <cstdint>
#include <omp.h>
#include "kevolve/abi.h"
#if defined(__AVX512F__)
// gcc 12 reports -Wmaybe-uninitialized inside its own AVX-512 headers (their
// _mm512_undefined_*() placeholders); silence it for the header text only.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop
#endif

namespace {

constexpr int64_t kCellsPerBoundary = 4;
constexpr int64_t kMaxCells = 16384;

struct Grid {
  float b0 = 0.f, scale = 0.f, gmax = 0.f;  // gmax = G - 1
  const int32_t* start = nullptr;           // G + 1 entries
  int iters = 0;                            // search steps for the fullest cell
};

inline int bit_width(int64_t v) {
  int w = 0;
  while (v > 0) { ++w; v >>= 1; }
  return w;
}

#if defined(__AVX512F__)

inline __m512i cells16(__m512 x, const Grid& g) {
  __m512 t = _mm512_mul_ps(_mm512_sub_ps(x, _mm512_set1_ps(g.b0)), _mm512_set1_ps(g.scale));
  t = _mm512_max_ps(t, _mm512_setzero_ps());  // NaN -> 0 (vmaxps returns the 2nd operand)
  t = _mm512_min_ps(t, _mm512_set1_ps(g.gmax));
  return _mm512_cvttps_epi32(t);
}

// One branch-free binary-search step for 16 lanes over [lo, lo + n).
inline void step16(__m512 x, __m512i& lo, __m512i& n, const float* bnd) {
  const __mmask16 active = _mm512_test_epi32_mask(n, n);
  const __m512i half = _mm512_srli_epi32(n, 1);
  const __m512 v = _mm512_mask_i32gather_ps(x, active, _mm512_add_epi32(lo, half), bnd, 4);
  const __mmask16 less = _mm512_mask_cmp_ps_mask(active, v, x, _CMP_LT_OQ);
  const __m512i step = _mm512_add_epi32(half, _mm512_set1_epi32(1));
  lo = _mm512_mask_add_epi32(lo, less, lo, step);
  n = _mm512_mask_sub_epi32(half, less, n, step);
}

// Answers for U*16 values: a fixed number of steps (enough for the fullest cell), so
// there is no data-dependent branch and the U searches overlap.
template <int U>
inline void searchU(const __m512* x, __m512i* lo, const Grid& g, const float* bnd) {
  __m512i n[U];
  for (int u = 0; u < U; ++u) {
    const __m512i c = cells16(x[u], g);
    lo[u] = _mm512_i32gather_epi32(c, g.start, 4);
    n[u] = _mm512_sub_epi32(_mm512_i32gather_epi32(c, g.start + 1, 4), lo[u]);
  }
  for (int it = 0; it < g.iters; ++it)
    for (int u = 0; u < U; ++u) step16(x[u], lo[u], n[u], bnd);
}

inline __m512i search16(__m512 x, const Grid& g, const float* bnd) {
  __m512i lo;
  searchU<1>(&x, &lo, g, bnd);
  return lo;
}

void run_range(const float* x, int32_t* y, int64_t i0, int64_t i1, const Grid& g,
               const float* bnd) {
  int64_t i = i0;
  // head: up to the first 64-byte aligned output address
  const int64_t mis = static_cast<int64_t>(reinterpret_cast<uintptr_t>(y + i) & 63) / 4;
  int64_t head = mis ? 16 - mis : 0;
  if (head > i1 - i) head = i1 - i;
  if (head > 0) {
    const __mmask16 m = static_cast<__mmask16>((1u << head) - 1u);
    const __m512 v = _mm512_maskz_loadu_ps(m, x + i);
    _mm512_mask_storeu_epi32(y + i, m, search16(v, g, bnd));
    i += head;
  }
  const bool aligned = (reinterpret_cast<uintptr_t>(y + i) & 63) == 0;
  constexpr int U = 4;
  for (; i + 16 * U <= i1; i += 16 * U) {
    __m512 v[U];
    __m512i r[U];
    for (int u = 0; u < U; ++u) v[u] = _mm512_loadu_ps(x + i + 16 * u);
    searchU<U>(v, r, g, bnd);
    for (int u = 0; u < U; ++u) {
      if (aligned) _mm512_stream_si512(reinterpret_cast<__m512i*>(y + i + 16 * u), r[u]);
      else _mm512_storeu_si512(y + i + 16 * u, r[u]);
    }
  }
  for (; i + 16 <= i1; i += 16) {
    const __m512i r = search16(_mm512_loadu_ps(x + i), g, bnd);
    if (aligned) _mm512_stream_si512(reinterpret_cast<__m512i*>(y + i), r);
    else _mm512_storeu_si512(y + i, r);
  }
  if (i < i1) {
    const __mmask16 m = static_cast<__mmask16>((1u << (i1 - i)) - 1u);
    const __m512 v = _mm512_maskz_loadu_ps(m, x + i);
    _mm512_mask_storeu_epi32(y + i, m, search16(v, g, bnd));
  }
  _mm_sfence();
}

// start[c] = #{j : cell(b_j) < c} for c in [0, G]; cells of sorted boundaries ascend.
int build(const float* bnd, int64_t nb, int64_t ncell, const Grid& g, int32_t* start) {
  int64_t c = 0;  // next start[] entry to fill
  for (int64_t j0 = 0; j0 < nb; j0 += 16) {
    const int64_t k = nb - j0 < 16 ? nb - j0 : 16;
    const __mmask16 m = static_cast<__mmask16>(k == 16 ? 0xffffu : (1u << k) - 1u);
    alignas(64) int32_t cells[16];
    _mm512_store_si512(cells, cells16(_mm512_maskz_loadu_ps(m, bnd + j0), g));
    for (int64_t q = 0; q < k; ++q)
      while (c <= cells[q]) start[c++] = static_cast<int32_t>(j0 + q);
  }
  while (c <= ncell) start[c++] = static_cast<int32_t>(nb);
  int64_t most = 0;
  for (int64_t q = 0; q < ncell; ++q)
    if (start[q + 1] - start[q] > most) most = start[q + 1] - start[q];
  return bit_width(most);
}

#endif

}  // namespace

extern "C" int kevolve_kernel(const kv_args* a) {
  const kv_tensor& xt = a->inputs[0];
  const kv_tensor& bt = a->inputs[1];
  const kv_tensor& out = a->outputs[0];
  if (xt.dtype != KV_F32 || bt.dtype != KV_F32 || out.dtype != KV_I32) return KV_ERR_UNSUPPORTED;
  const int64_t n = xt.dims[0], nb = bt.dims[0];
  const float* x = static_cast<const float*>(xt.data);
  const float* bnd = static_cast<const float*>(bt.data);
  int32_t* y = static_cast<int32_t*>(out.data);
  if (n <= 0) return KV_OK;
  if (nb <= 0 || nb > INT32_MAX - 1) {
    if (nb > 0) return KV_ERR_UNSUPPORTED;
    for (int64_t i = 0; i < n; ++i) y[i] = 0;
    return KV_OK;
  }
#if defined(__AVX512F__)
  Grid g;
  int32_t fallback[2] = {0, static_cast<int32_t>(nb)};
  int64_t ncell = kCellsPerBoundary * nb < kMaxCells ? kCellsPerBoundary * nb : kMaxCells;
  const int64_t ws_cells = a->workspace ? a->workspace_bytes / 4 - 1 : 0;
  if (ncell > ws_cells) ncell = ws_cells;
  const float lo = bnd[0], hi = bnd[nb - 1];
  const float range = hi - lo;
  const float scale = ncell >= 2 ? static_cast<float>(ncell) / range : 0.f;
  if (ncell >= 2 && std::isfinite(lo) && std::isfinite(hi) && range > 0.f &&
      std::isfinite(range) && std::isfinite(scale) && scale > 0.f) {
    g.b0 = lo;
    g.scale = scale;
    g.gmax = static_cast<float>(ncell - 1);
    g.iters = build(bnd, nb, ncell, g, static_cast<int32_t*>(a->workspace));
    g.start = static_cast<const int32_t*>(a->workspace);
  } else {  // one cell: cells16() yields 0 for every x (including +-inf and NaN)
    g.start = fallback;
    g.iters = bit_width(nb);
  }
#pragma omp parallel num_threads(a->num_threads)
  {
    const int64_t nt = omp_get_num_threads(), t = omp_get_thread_num();
    // split on 16-element boundaries so each thread's streaming body stays aligned
    const int64_t blocks = (n + 15) / 16;
    const int64_t i0 = blocks * t / nt * 16;
    int64_t i1 = blocks * (t + 1) / nt * 16;
    if (i1 > n) i1 = n;
    if (i0 < i1) run_range(x, y, i0, i1, g, bnd);
  }
#else
#pragma omp parallel for num_threads(a->num_threads)
  for (int64_t i = 0; i < n; ++i) {  // branch-free lower_bound
    const float v = x[i];
    const float* base = bnd;
    int64_t len = nb;
    while (len > 1) {
      const int64_t half = len / 2;
      base = base[half - 1] < v ? base + half : base;
      len -= half;
    }
    y[i] = static_cast<int32_t>(base - bnd + (base[0] < v ? 1 : 0));
  }
#endif
  return KV_OK;
}
