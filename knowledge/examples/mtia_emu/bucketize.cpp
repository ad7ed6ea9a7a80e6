// knowledge/examples/mtia_emu/bucketize.cpp: an honest mtia_emu kernel of bucketize (kevolve eval --backend mtia_emu).
// knowledge/templates/mtia_emu/bucketize.cpp.tmpl with the parameters below: a grid index of 8 cells per boundary
// built per call (kv_mtia_cvt_f2i cells, the fullest cell peeked to set the search steps), searched in a modulo
// schedule split between the engines (pipe: the vector core converts and compares, the SE gathers and adds, about
// 8 passes of 1/32 cycle each per element at 2 steps), 1024-element chunks, x read three chunks ahead.
#define KVP_SLOTS 3
#define KVP_CHUNK_KB 4
#define KVP_ENGINE_SE 1
#define KVP_VEC_EVERY 4
#define KVP_INDEX 1
#define KVP_PIPE 1
#define KVP_CELLS 8
// kevolve mtia_emu template: bucketize (lower_bound count) as a branch-free
// binary search on the SE / vector core with the boundaries in local memory.
// Each program owns a contiguous range of x (cut at 8 elements so every DMA
// is 32-byte aligned) and streams it in chunks of ~KVP_CHUNK_KB KiB. Per
// chunk, with the table in local memory (one copy per engine used):
//   pos = 0; for half in the fixed schedule of NB (n -= half each step):
//     g = table[pos + half] (kv_mtia_lm_gather); m = g < x; pos += m ? half : 0
//   final: g = table[pos]; pos += g < x
// Every level is three commands on one engine. KVP_ENGINE_*: se (fastest
// gather), vec, or split (every KVP_VEC_EVERY-th chunk on the vector core so
// both engines work). KVP_SLOTS CB slots on the DMA stages: 1 serialises DMA
// and the search, 2+ overlaps them. Boundaries that do not fit local memory
// are searched in blocks whose counts are added. KVP_INDEX 1: a grid index of
// KVP_CELLS cells per boundary (_bucketize_grid.inc) bounds every search to
// one cell, a few steps instead of log2(NB) + 1, where the index fits the
// workspace and local memory (else the plain search above). KVP_PIPE 1: the
// grid index with every chunk split between the engines (the vector core
// converts and compares, the SE gathers and adds) in a modulo schedule.
#include <stdint.h>

#include <kevolve/abi.h>
#include <kevolve/mtia.h>

#if defined(KVP_ENGINE_VEC)
#define BK_ENGINE 1
#else
#define BK_ENGINE 0
#endif
#if defined(KVP_ENGINE_SPLIT)
#define BK_ENGINES 2
#else
#define BK_ENGINES 1
#endif

namespace {

struct cfg {
  uint64_t x, bnd, out;
  int64_t n, nb, block, nblocks;  // block: boundaries per table (multiple of 8 unless one block)
  int32_t chunk, slots, engines, vec_every;
};

struct lane {  // the buffers of one engine
  int e, tab, x, pa, pb, g, m, part, ta, tb, out;
};

// count of table[0..nbk) < x for n elements of the x slot (kept), into dest.
void search(kv_mtia_device* d, const lane& l, int nbk, int n, uint32_t tab_flags, bool last_x_use, int dest) {
  int cur = l.pa, other = l.pb;
  kv_mtia_int_op(d, l.e, KV_IOP_AND, l.x, KV_CB_KEEP, -1, 0, cur, n, KV_I32, 0);  // pos = 0
  for (int len = nbk; len > 1; len -= len / 2) {
    const int half = len / 2;
    kv_mtia_lm_gather(d, l.e, l.tab, KV_CB_KEEP, nbk, KV_F32, cur, KV_CB_KEEP, l.g, n, half);
    kv_mtia_cmp(d, l.e, KV_CMP_LT, l.g, KV_CB_POP, l.x, KV_CB_KEEP, l.m, n, KV_F32);
    kv_mtia_int_op(d, l.e, KV_IOP_ADD_IF, cur, KV_CB_POP, l.m, KV_CB_POP, other, n, KV_I32, uint64_t(half));
    const int t = cur;
    cur = other;
    other = t;
  }
  kv_mtia_lm_gather(d, l.e, l.tab, tab_flags, nbk, KV_F32, cur, KV_CB_KEEP, l.g, n, 0);
  kv_mtia_cmp(d, l.e, KV_CMP_LT, l.g, KV_CB_POP, l.x, last_x_use ? KV_CB_POP : KV_CB_KEEP, l.m, n, KV_F32);
  kv_mtia_int_op(d, l.e, KV_IOP_ADD_IF, cur, KV_CB_POP, l.m, KV_CB_POP, dest, n, KV_I32, 1);
}

void program(kv_mtia_device* d, const void* user) {
  const cfg& c = *static_cast<const cfg*>(user);
  const int64_t units = (c.n + 7) / 8, pid = kv_mtia_program_id(d), np = kv_mtia_num_programs(d);
  const int64_t i0 = units * pid / np * 8;
  int64_t i1 = units * (pid + 1) / np * 8;
  if (i1 > c.n) i1 = c.n;
  if (i0 >= i1) return;
  const int32_t cb = c.chunk * 4;
  lane ln[2];
  for (int k = 0; k < c.engines; ++k) {
    lane& l = ln[k];
    l.e = c.engines == 2 ? k : BK_ENGINE;
    l.tab = kv_mtia_cb_alloc(d, int32_t(c.block * 4), 1);
    l.x = kv_mtia_cb_alloc(d, cb, c.slots);
    l.pa = kv_mtia_cb_alloc(d, cb, 1);
    l.pb = kv_mtia_cb_alloc(d, cb, 1);
    l.g = kv_mtia_cb_alloc(d, cb, 1);
    l.m = kv_mtia_cb_alloc(d, cb, 1);
    l.part = l.ta = l.tb = -1;
    if (c.nblocks > 1) {
      l.part = kv_mtia_cb_alloc(d, cb, 1);
      l.ta = kv_mtia_cb_alloc(d, cb, 1);
      l.tb = kv_mtia_cb_alloc(d, cb, 1);
    }
    l.out = kv_mtia_cb_alloc(d, cb, c.slots);
    if (c.nblocks == 1) kv_mtia_dma_in(d, l.tab, kv_mtia_rows(c.bnd, 1, c.nb * 4, c.nb * 4));
  }
  int64_t chunk_no = 0;
  for (int64_t i = i0; i < i1; i += c.chunk, ++chunk_no) {
    const int n = int(i1 - i < c.chunk ? i1 - i : c.chunk);
    const lane& l = ln[c.engines == 2 && c.vec_every > 0 && chunk_no % c.vec_every == c.vec_every - 1 ? 1 : 0];
    kv_mtia_dma_in(d, l.x, kv_mtia_rows(c.x + uint64_t(i) * 4, 1, n * 4, n * 4));
    if (c.nblocks == 1) {
      search(d, l, int(c.nb), n, KV_CB_KEEP, true, l.out);
    } else {
      int tot = l.ta, spare = l.tb;
      for (int64_t b = 0; b < c.nblocks; ++b) {
        const int64_t nbk = c.nb - b * c.block < c.block ? c.nb - b * c.block : c.block;
        const uint64_t src = c.bnd + uint64_t(b * c.block) * 4;
        kv_mtia_dma_in(d, l.tab, kv_mtia_rows(src, 1, nbk * 4, nbk * 4));
        const bool last = b == c.nblocks - 1;
        search(d, l, int(nbk), n, KV_CB_POP, last, b == 0 ? tot : l.part);
        if (b == 0) continue;
        kv_mtia_int_op(d, l.e, KV_IOP_ADD, tot, KV_CB_POP, l.part, KV_CB_POP, last ? l.out : spare, n, KV_I32, 0);
        const int t = tot;
        tot = spare;
        spare = t;
      }
    }
    kv_mtia_dma_out(d, kv_mtia_rows(c.out + uint64_t(i) * 4, 1, n * 4, n * 4), l.out, KV_CB_POP);
  }
}

#if KVP_INDEX || KVP_PIPE
// ---- bucketize with a grid index (KVP_INDEX) --------------------------------
// f(v) = clamp(floor(a*v + b), 0, G-1) (kv_mtia_cvt_f2i) maps a value to one
// of G = KVP_CELLS * NB cells over [first, last] boundary; it never decreases
// as v grows, so with T[c] = #{j : f(b[j]) < c} every boundary left of T[f(x)]
// is < x and every one from T[f(x) + 1] on is > x, whatever the rounding:
// count(x) = T[c] + #{j in [T[c], T[c+1]) : b[j] < x}, c = f(x). NaN and
// values below the range land in cell 0, values above it in cell G-1.
//   1. every PE peeks the first and last boundary (two small DMAs and scalar
//      loads) to choose a and b on the scalar core, and converts all of them;
//   2. the PEs build T together, a slice each (a binary search of the cell
//      numbers in f(b)), with the fullest cell of their slice, into scratch
//      (the workspace, or the output buffer when only that is large enough);
//      barrier; every PE takes the largest count and peeks it: S = bits(m)
//      branch-free steps over the window [T[c], T[c] + 2^S - 1) cover every
//      cell (boundaries past the cell are > x, a padding of +inf past NB);
//   3. every PE reads T (barrier before the output is overwritten), then per
//      chunk of x: f(x), a gather of T, S steps of gather + compare +
//      conditional add (on the SE, every KVP_VEC_EVERY-th chunk on the vector
//      core with split), DMA out. KVP_PIPE 1 splits every chunk between the
//      engines instead (pipe_search below).
// Usually S = 2 or 3; clustered boundaries only cost more steps, never a
// wrong count. The kernel reads its data to choose S (a data-dependent
// kernel: it always runs with arithmetic).
namespace grid_index {

struct cfg {
  uint64_t x, bnd, out, scratch;
  int64_t n, nb;
  int32_t cells;    // G
  int32_t entries;  // G + 1 rounded up to 8
  int32_t slice;    // T entries per building program (multiple of 8)
  int32_t builders;
  int32_t lanes, vec_every, slots, chunk_max;  // lanes: 1 (SE) or 2 (SE and vector core)
  int64_t ls_bytes;
};

// Local-memory bytes besides the chunk buffers, for `lanes` search engines and
// a padding of `pad` entries past the boundaries.
int64_t fixed_bytes(int64_t nb, int64_t entries, int64_t slice, int lanes, int64_t pad) {
  return 8192 + 2048 + 4 * (3 * nb + 10 * (slice + 8) + lanes * (entries + nb + pad) + pad);
}
int64_t pad_for(int64_t fullest) {  // 2^S - 1 for the S steps that cover `fullest` boundaries
  int64_t p = 1;
  while (p - 1 < fullest) p *= 2;
  return p - 1 > 0 ? p - 1 : 1;
}
// Elements per chunk: every lane keeps x and out (slots each) and 4 work buffers.
int64_t chunk_for(int64_t room, int lanes, int slots) {
  return room > 0 ? room / (4 * lanes * (2 * slots + 4)) / 8 * 8 : 0;
}

// dest = #{j < nbk : table[j] < v} for the n values v in vb (kept), branch-free.
void count_below(kv_mtia_device* d, int e, int tab, int nbk, int dtype, int vb, int n, int pa, int pb, int g, int m,
                 int dest) {
  int cur = pa, other = pb;
  kv_mtia_int_op(d, e, KV_IOP_AND, vb, KV_CB_KEEP, -1, 0, cur, n, KV_I32, 0);  // pos = 0
  for (int len = nbk; len > 1; len -= len / 2) {
    const int half = len / 2;
    kv_mtia_lm_gather(d, e, tab, KV_CB_KEEP, nbk, dtype, cur, KV_CB_KEEP, g, n, half);
    kv_mtia_cmp(d, e, KV_CMP_LT, g, KV_CB_POP, vb, KV_CB_KEEP, m, n, dtype);
    kv_mtia_int_op(d, e, KV_IOP_ADD_IF, cur, KV_CB_POP, m, KV_CB_POP, other, n, KV_I32, uint64_t(half));
    const int t = cur;
    cur = other;
    other = t;
  }
  kv_mtia_lm_gather(d, e, tab, KV_CB_KEEP, nbk, dtype, cur, KV_CB_KEEP, g, n, 0);
  kv_mtia_cmp(d, e, KV_CMP_LT, g, KV_CB_POP, vb, KV_CB_KEEP, m, n, dtype);
  kv_mtia_int_op(d, e, KV_IOP_ADD_IF, cur, KV_CB_POP, m, KV_CB_POP, dest, n, KV_I32, 1);
}

float bits_to_float(int64_t v) {
  const uint32_t u = uint32_t(v);
  float f;
  __builtin_memcpy(&f, &u, 4);
  return f;
}
bool finite(float v) { return v == v && v - v == 0.0f; }

struct lane {
  int e, bt, tt, x, pa, pb, g, m, out;
};

#if KVP_PIPE
// 3 with KVP_PIPE: the vector core converts and compares, the SE gathers and
// adds. Per element and S steps, in passes of 1/32 cycle: SE 2 (T gather) +
// 3S (gather 2, add 1), vector core 4 (fp32 conversion) + 2S (fp32 compare),
// so at S = 2 both engines need 8 (0.25 cycle per element and PE; the 8 bytes
// an element moves cost 64 * 8 / 2000 = 0.256 cycle of the shared SRAM), where
// one engine alone needs 11 (SE) or 36 (vector core). A modulo schedule keeps
// both busy: in period p the vector core converts chunk p and does compare t
// of chunk p-1-t; the SE does add 0 of chunk p-1, the T gather of chunk p,
// add t > 0 of chunk p-1-t, then gather t of chunk p-t (this order leaves no
// engine waiting in steady state; S + 1 chunks in flight). x is read
// KVP_SLOTS periods ahead. Buffers: a ring of S + 1 x buffers (DMA -> vector
// core), one FIFO per search position q[t] and for cells, gathered
// boundaries, masks and out, each with one producer and one consumer engine.
constexpr int kPipeMaxSteps = 4;  // 2S + 5 buffers on top of the index's 18

void pipe_search(kv_mtia_device* d, const cfg& c, int tt, int bt, int nb, int pad, int steps, float a, float b,
                 int64_t i0, int64_t i1, int64_t chunk) {
  const int S = steps, D = steps + 1, cb = int(chunk) * 4;
  int x[kPipeMaxSteps + 1], q[kPipeMaxSteps];
  for (int k = 0; k < D; ++k) x[k] = kv_mtia_cb_alloc(d, cb, 2);
  for (int t = 0; t < S; ++t) q[t] = kv_mtia_cb_alloc(d, cb, 2);
  const int cell = kv_mtia_cb_alloc(d, cb, 2), g = kv_mtia_cb_alloc(d, cb, S + 1);
  const int m = kv_mtia_cb_alloc(d, cb, S + 1), out = kv_mtia_cb_alloc(d, cb, c.slots);
  const int64_t chunks = (i1 - i0 + chunk - 1) / chunk;
  auto len = [&](int64_t k) { return int(i1 - i0 - k * chunk < chunk ? i1 - i0 - k * chunk : chunk); };
  auto rows = [&](uint64_t base, int64_t k) {
    return kv_mtia_rows(base + uint64_t(i0 + k * chunk) * 4, 1, len(k) * 4, len(k) * 4);
  };
  auto dma_in = [&](int64_t k) {
    if (k < chunks) kv_mtia_dma_in(d, x[k % D], rows(c.x, k));
  };
  auto gather_t = [&](int64_t k) {  // T[cell] of chunk k: its first search position
    if (k < chunks) kv_mtia_lm_gather(d, 0, tt, KV_CB_KEEP, c.entries, KV_I32, cell, KV_CB_POP, q[0], len(k), 0);
  };
  for (int k = 0; k < c.slots; ++k) dma_in(k);  // x arrives KVP_SLOTS periods ahead (2 slots cover it)
  for (int64_t p = 0; p < chunks + S; ++p) {
    dma_in(p + c.slots);
    if (p < chunks) kv_mtia_cvt_f2i(d, 1, x[p % D], KV_CB_KEEP, cell, len(p), KV_F32, a, b, 0, c.cells - 1);
    for (int t = 0; t < S; ++t) {  // compare t of chunk p-1-t against boundary gather t
      const int64_t k = p - 1 - t;
      if (k >= 0 && k < chunks)
        kv_mtia_cmp(d, 1, KV_CMP_LT, g, KV_CB_POP, x[k % D], t == S - 1 ? KV_CB_POP : KV_CB_KEEP, m, len(k), KV_F32);
    }
    for (int t = 0; t < S; ++t) {  // add t of chunk p-1-t: the position moves right by 2^(S-1-t) where b < x
      const int64_t k = p - 1 - t;
      if (t == 1) gather_t(p);
      if (k < 0 || k >= chunks) continue;
      const bool last = t == S - 1;
      kv_mtia_int_op(d, 0, KV_IOP_ADD_IF, q[t], KV_CB_POP, m, KV_CB_POP, last ? out : q[t + 1], len(k), KV_I32,
                     uint64_t(1) << (S - 1 - t));
      if (last) kv_mtia_dma_out(d, rows(c.out, k), out, KV_CB_POP);
    }
    if (S == 1) gather_t(p);
    for (int t = 0; t < S; ++t) {  // boundary gather t of chunk p-t at its window's midpoint
      const int64_t k = p - t;
      if (k >= 0 && k < chunks)
        kv_mtia_lm_gather(d, 0, bt, KV_CB_KEEP, nb + pad, KV_F32, q[t], KV_CB_KEEP, g, len(k), (1 << (S - 1 - t)) - 1);
    }
  }
}
#endif

void program(kv_mtia_device* d, const void* user) {
  const cfg& c = *static_cast<const cfg*>(user);
  const int64_t pid = kv_mtia_program_id(d), np = kv_mtia_num_programs(d);
  const int nb = int(c.nb), G = c.cells, E = c.entries, sl = c.slice + 8;
  // 1. the first and last boundary for the grid, all of them converted
  const int lh = kv_mtia_cb_alloc(d, 32, 2);
  const int64_t last_at = (nb - 1) / 8 * 8;
  kv_mtia_dma_in(d, lh, kv_mtia_rows(c.bnd, 1, 4, 4));
  kv_mtia_dma_in(d, lh, kv_mtia_rows(c.bnd + uint64_t(last_at) * 4, 1, (nb - last_at) * 4, 32));
  const int bs = kv_mtia_cb_alloc(d, nb * 4, 1), braw = kv_mtia_cb_alloc(d, nb * 4, 1);
  kv_mtia_dma_in_bcast(d, bs, kv_mtia_rows(c.bnd, 1, nb * 4, nb * 4));
  kv_mtia_dma_in_bcast(d, braw, kv_mtia_rows(c.bnd, 1, nb * 4, nb * 4));
  int64_t lo_bits = 0, hi_bits = 0;
  kv_mtia_sc_peek_int(d, lh, KV_I32, 0, KV_CB_POP, &lo_bits);
  kv_mtia_sc_peek_int(d, lh, KV_I32, nb - 1 - last_at, KV_CB_POP, &hi_bits);
  const float lo = bits_to_float(lo_bits), hi = bits_to_float(hi_bits);
  float a = 0.0f, b = 0.0f;  // one cell for everything unless the range is usable
  if (finite(lo) && finite(hi) && hi > lo) {
    const float s = float(double(G) / (double(hi) - double(lo)));
    const float o = -lo * s;
    if (finite(s) && s > 0.0f && finite(o)) {
      a = s;
      b = o;
    }
  }
  const int fb = kv_mtia_cb_alloc(d, nb * 4, 1);
  kv_mtia_cvt_f2i(d, 0, bs, KV_CB_POP, fb, nb, KV_F32, a, b, 0, G - 1);
  // 2. a slice of T and its fullest cell: T[c0 .. c0 + len] (one past the
  //    slice), occupancy = T shifted by one - T, 8 partial maxima
  const int cv = kv_mtia_cb_alloc(d, sl * 4, 1), ts = kv_mtia_cb_alloc(d, sl * 4, 1);
  const int tcopy = kv_mtia_cb_alloc(d, sl * 4, 1), occ = kv_mtia_cb_alloc(d, sl * 4, 1);
  const int mxb = kv_mtia_cb_alloc(d, 32, 1);
  const int pa = kv_mtia_cb_alloc(d, sl * 4, 1), pb = kv_mtia_cb_alloc(d, sl * 4, 1);
  const int g = kv_mtia_cb_alloc(d, sl * 4, 1), m = kv_mtia_cb_alloc(d, sl * 4, 1);
  const uint64_t maxes = c.scratch + uint64_t(E) * 4;
  if (pid < c.builders) {
    const int64_t c0 = pid * c.slice;
    const int len = int(E - c0 < c.slice ? E - c0 : c.slice);
    int64_t vals[4096];
    for (int i = 0; i <= len; ++i) vals[i] = c0 + i;
    kv_mtia_sc_push_int(d, cv, KV_I32, vals, len + 1);  // the scalar core writes the cell numbers
    count_below(d, 0, fb, nb, KV_I32, cv, len + 1, pa, pb, g, m, ts);
    kv_mtia_lm_gather(d, 0, ts, KV_CB_KEEP, len + 1, KV_I32, cv, KV_CB_KEEP, tcopy, len, int32_t(-c0));
    kv_mtia_lm_gather(d, 0, ts, KV_CB_KEEP, len + 1, KV_I32, cv, KV_CB_POP, g, len, int32_t(1 - c0));
    kv_mtia_dma_out(d, kv_mtia_rows(c.scratch + uint64_t(c0) * 4, 1, len * 4, len * 4), tcopy, KV_CB_POP);
    kv_mtia_int_op(d, 0, KV_IOP_SUB, g, KV_CB_POP, ts, KV_CB_POP, occ, len, KV_I32, 0);
    kv_mtia_vec_op(d, KV_OP_RMAX, occ, KV_CB_POP, -1, 0, 0, mxb, 8, len / 8, KV_I32, KV_I32, 1.0f, 0.0f);
    kv_mtia_dma_out(d, kv_mtia_rows(maxes + uint64_t(pid) * 32, 1, 32, 32), mxb, KV_CB_POP);
  }
  kv_mtia_barrier(d);
  const int mbuf = kv_mtia_cb_alloc(d, c.builders * 32, 1), mx = kv_mtia_cb_alloc(d, 32, 1);
  kv_mtia_dma_in_bcast(d, mbuf, kv_mtia_rows(maxes, 1, c.builders * 32, c.builders * 32));
  lane ln[2];
  ln[0].e = 0;
  ln[1].e = 1;
  ln[0].tt = kv_mtia_cb_alloc(d, E * 4, 1);
  kv_mtia_dma_in_bcast(d, ln[0].tt, kv_mtia_rows(c.scratch, 1, int64_t(E) * 4, int64_t(E) * 4));
  kv_mtia_vec_op(d, KV_OP_RMAX, mbuf, KV_CB_POP, -1, 0, 0, mx, 1, c.builders * 8, KV_I32, KV_I32, 1.0f, 0.0f);
  int64_t fullest = 0;
  kv_mtia_sc_peek_int(d, mx, KV_I32, 0, KV_CB_POP, &fullest);
  int steps = 0;
  while ((int64_t(1) << steps) - 1 < fullest) ++steps;
  const int pad = int(pad_for(fullest));
  // 3. chunks as large as local memory allows; the vector core only if it fits
  int lanes = c.lanes;
  int64_t chunk = chunk_for(c.ls_bytes - fixed_bytes(nb, E, c.slice, lanes, pad), lanes, c.slots);
#if KVP_PIPE
  // one table copy (the SE gathers) and 2(S+1) x, 2S positions, 2 cells,
  // 2(S+1) boundaries and masks, `slots` out chunk buffers
  const int64_t pipe_chunk =
      (c.ls_bytes - fixed_bytes(nb, E, c.slice, 1, pad)) / (4 * (6 * steps + 6 + c.slots)) / 8 * 8;
  const bool pipe = steps <= kPipeMaxSteps && pipe_chunk >= 64;
  if (pipe) {
    chunk = pipe_chunk;
    lanes = 1;
  }
#endif
  if (lanes == 2 && chunk < 512) {
    lanes = 1;
    chunk = chunk_for(c.ls_bytes - fixed_bytes(nb, E, c.slice, lanes, pad), lanes, c.slots);
  }
  if (chunk > c.chunk_max) chunk = c.chunk_max;
  const int pc = kv_mtia_cb_alloc(d, pad * 4, 1);
  kv_mtia_se_fill(d, pc, 1, pad, KV_F32, __builtin_inff());
  for (int k = 0; k < lanes; ++k) {
    if (k > 0) {
      ln[k].tt = kv_mtia_cb_alloc(d, E * 4, 1);
      kv_mtia_dma_in_bcast(d, ln[k].tt, kv_mtia_rows(c.scratch, 1, int64_t(E) * 4, int64_t(E) * 4));
    }
    ln[k].bt = kv_mtia_cb_alloc(d, (nb + pad) * 4, 1);
    kv_mtia_mlu_concat(d, braw, pc, k + 1 < lanes ? KV_CB_KEEP : KV_CB_POP, 1, nb * 4, pad * 4, ln[k].bt);
  }
  if (c.scratch == c.out) kv_mtia_barrier(d);  // everyone has T before the output is written
  const int64_t units = (c.n + 7) / 8;
  const int64_t i0 = units * pid / np * 8;
  int64_t i1 = units * (pid + 1) / np * 8;
  if (i1 > c.n) i1 = c.n;
  if (i0 >= i1) return;
#if KVP_PIPE
  if (pipe) {
    // the schedule fills and drains over S + KVP_SLOTS periods: at least 32
    // chunks per program keep that under a tenth of the time
    const int64_t share = ((i1 - i0 + 31) / 32 + 7) / 8 * 8;
    pipe_search(d, c, ln[0].tt, ln[0].bt, nb, pad, steps, a, b, i0, i1, chunk < share ? chunk : share);
    return;
  }
#endif
  if (chunk > i1 - i0) chunk = (i1 - i0 + 7) / 8 * 8;
  const int cb = int(chunk) * 4;
  for (int k = 0; k < lanes; ++k) {
    lane& l = ln[k];
    l.x = kv_mtia_cb_alloc(d, cb, c.slots);
    l.out = kv_mtia_cb_alloc(d, cb, c.slots);
    l.pa = kv_mtia_cb_alloc(d, cb, 1);
    l.pb = kv_mtia_cb_alloc(d, cb, 1);
    l.g = kv_mtia_cb_alloc(d, cb, 1);
    l.m = kv_mtia_cb_alloc(d, cb, 1);
  }
  int64_t chunk_no = 0;
  for (int64_t i = i0; i < i1; i += chunk, ++chunk_no) {
    const int n = int(i1 - i < chunk ? i1 - i : chunk);
    const lane& l = ln[lanes == 2 && chunk_no % c.vec_every == c.vec_every - 1 ? 1 : 0];
    kv_mtia_dma_in(d, l.x, kv_mtia_rows(c.x + uint64_t(i) * 4, 1, n * 4, n * 4));
    kv_mtia_cvt_f2i(d, l.e, l.x, KV_CB_KEEP, l.pb, n, KV_F32, a, b, 0, G - 1);
    kv_mtia_lm_gather(d, l.e, l.tt, KV_CB_KEEP, E, KV_I32, l.pb, KV_CB_POP, l.pa, n, 0);
    int cur = l.pa, other = l.pb;
    for (int s = steps - 1; s >= 0; --s) {
      const int half = 1 << s, dest = s == 0 ? l.out : other;
      kv_mtia_lm_gather(d, l.e, l.bt, KV_CB_KEEP, nb + pad, KV_F32, cur, KV_CB_KEEP, l.g, n, half - 1);
      kv_mtia_cmp(d, l.e, KV_CMP_LT, l.g, KV_CB_POP, l.x, s == 0 ? KV_CB_POP : KV_CB_KEEP, l.m, n, KV_F32);
      kv_mtia_int_op(d, l.e, KV_IOP_ADD_IF, cur, KV_CB_POP, l.m, KV_CB_POP, dest, n, KV_I32, uint64_t(half));
      other = cur;
      cur = dest;
    }
    kv_mtia_dma_out(d, kv_mtia_rows(c.out + uint64_t(i) * 4, 1, n * 4, n * 4), l.out, KV_CB_POP);
  }
}

// Launches the indexed search when the index fits scratch and local memory
// (halving the cells per boundary until it does); returns -1 to fall back to
// the plain search.
int run(const kv_args* a, kv_mtia_device* dev, int64_t n, int64_t nb, uint64_t x, uint64_t bnd, uint64_t out) {
  const int32_t pes = kv_mtia_grid_rows(dev) * kv_mtia_grid_cols(dev);
  cfg c;
  c.ls_bytes = kv_mtia_query(dev, KV_MTIA_Q_LS_BYTES);
  c.lanes = BK_ENGINES;
  c.slots = KVP_SLOTS;
  c.chunk_max = KVP_CHUNK_KB * 1024 / 4;
  if (nb < 1) return -1;
  for (int64_t per = KVP_CELLS;; per /= 2) {
    if (per < 1) return -1;
    const int64_t cells = per * nb, entries = (cells + 1 + 7) / 8 * 8;
    const int64_t slice = ((entries + pes - 1) / pes + 7) / 8 * 8, builders = (entries + slice - 1) / slice;
    const int64_t need = entries * 4 + builders * 32;
    uint64_t scratch = 0;  // the workspace saves a barrier; the output buffer is larger
    if (a->workspace && a->workspace_bytes >= need) scratch = uint64_t(uintptr_t(a->workspace));
    else if (n * 4 >= need) scratch = out;
    // Room for the worst case (every boundary in one cell) on the SE alone.
    if (!scratch || slice > 4088 ||
        chunk_for(c.ls_bytes - fixed_bytes(nb, entries, slice, 1, pad_for(nb)), 1, c.slots) < 256)
      continue;
    c.cells = int32_t(cells);
    c.entries = int32_t(entries);
    c.slice = int32_t(slice);
    c.builders = int32_t(builders);
    c.scratch = scratch;
    break;
  }
  c.x = x;
  c.bnd = bnd;
  c.out = out;
  c.n = n;
  c.nb = nb;
  c.vec_every = KVP_VEC_EVERY;
  return kv_mtia_launch(dev, pes, program, &c);
}

}  // namespace grid_index
#endif

}  // namespace

extern "C" int kevolve_kernel(const kv_args* a, kv_mtia_device* dev) {
  cfg c;
  c.x = kv_mtia_addr(&a->inputs[0]);
  c.bnd = kv_mtia_addr(&a->inputs[1]);
  c.out = kv_mtia_addr(&a->outputs[0]);
  c.n = kv_numel(&a->inputs[0]);
  c.nb = kv_numel(&a->inputs[1]);
#if KVP_INDEX || KVP_PIPE
  {
    const int r = grid_index::run(a, dev, c.n, c.nb, c.x, c.bnd, c.out);
    if (r >= 0) return r;
  }
#endif
  c.engines = BK_ENGINES;
  c.vec_every = KVP_VEC_EVERY;
  const int32_t pes = kv_mtia_grid_rows(dev) * kv_mtia_grid_cols(dev);
  int64_t chunk = int64_t(KVP_CHUNK_KB) * 1024 / 4;
  const int64_t per_pe = (c.n + pes - 1) / pes;
  if (chunk > per_pe) chunk = (per_pe + 7) / 8 * 8;  // one chunk covers a program's range
  // Local memory per engine: x and out (slots each), 4 work buffers (+3 when
  // the boundaries come in blocks) and the table.
  const int64_t budget = (kv_mtia_query(dev, KV_MTIA_Q_LS_BYTES) - 8192) / c.engines;
  int64_t slots = KVP_SLOTS;
  while ((2 * slots + 7) * chunk * 4 > budget / 2 && (slots > 1 || chunk > 256)) {
    if (slots > 1) --slots;
    else chunk /= 2;
  }
  const int64_t fixed = (2 * slots + 7) * chunk * 4;
  c.chunk = int32_t(chunk);
  c.slots = int32_t(slots);
  if (c.nb * 4 + fixed - 3 * chunk * 4 <= budget) {
    c.block = c.nb;
    c.nblocks = 1;
  } else {
    c.block = (budget - fixed) / 4 / 8 * 8;
    c.nblocks = (c.nb + c.block - 1) / c.block;
  }
  return kv_mtia_launch(dev, pes, program, &c);
}
