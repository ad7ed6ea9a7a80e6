// The mtia_emu baseline of softmax: what a compiler would emit without double
// buffering or engine balancing (one CB slot per stage, every pass on the SE).
// Generated from knowledge/templates/mtia_emu/row_norm.cpp.tmpl with the parameters below.
#define KVP_SLOTS 1
#define KVP_CHUNK_KB 16
#define KVP_VEC_TAIL 0
#define KVP_RE_STATS 0
// Row-wise softmax / rmsnorm / layernorm over x [B, N] on the MTIA-like
// emulator. Each program owns a band of rows (cut at 32-byte boundaries) and
// streams it in chunks of ~KVP_CHUNK_KB KiB through a chain of SIMD-engine
// passes (row reductions RMAX/SUM give one value per row, KV_Y_COL applies it
// back); KVP_VEC_TAIL moves the last passes (scale by gamma, add beta, divide
// by the sum) to the vector core so two engines share the work. KVP_SLOTS CB
// slots per stage (1: no overlap of DMA and compute), fewer when local memory
// is short. KVP_RE_STATS (softmax, layernorm) moves the row statistics to the
// reduction engine (_row_re_stats.inc).
#include <stdint.h>

#include <kevolve/abi.h>
#include <kevolve/mtia.h>

#define KIND_softmax 1
#ifndef KIND_softmax
#define KIND_softmax 0
#endif
#ifndef KIND_layernorm
#define KIND_layernorm 0
#endif
#ifndef KVP_RE_STATS
#define KVP_RE_STATS 0
#endif
#define RE_STATS (KVP_RE_STATS && (KIND_softmax || KIND_layernorm))
// Chunk-sized fp32 stages (besides a widened 16-bit x) one slot of the chain holds.
#if KIND_layernorm
#define F32_STAGES(vec) ((vec) ? 4 : 3) /* without the vector core, w shares u's buffer */
#define PARAM_ROWS 2 /* gamma, beta */
#elif KIND_rmsnorm
#define F32_STAGES(vec) 2
#define PARAM_ROWS 1
#else
#define F32_STAGES(vec) 2
#define PARAM_ROWS 0
#endif

namespace {

struct cfg {
  uint64_t x, gamma, beta, y;
  int64_t rows, cols, row_bytes, unit, chunk_rows, w;
  int32_t dtype, slots, accs, vec, dpe, first_on_se;
  float eps;
};

// A 16-bit x is widened to fp32 once per chunk, except for softmax, which
// reads it as it is (its row max is exact in its dtype; x - max is formed in fp32).
bool widens_x(int32_t dtype) { return dtype != KV_F32 && !KIND_softmax; }

// A binary op on the vector core (vec: KVP_VEC_TAIL where local memory
// holds its buffers) or on the SE.
int binary_on(kv_mtia_device* d, int vec, int32_t op, int32_t cb_x, uint32_t x_flags, int32_t cb_y, uint32_t y_flags,
              int32_t y_bcast, int32_t cb_out, int32_t rows, int32_t cols, int32_t in_dtype, int32_t out_dtype) {
  if (vec)
    return kv_mtia_vec_op(d, op, cb_x, x_flags, cb_y, y_flags, y_bcast, cb_out, rows, cols, in_dtype, out_dtype, 1.0f,
                          0.0f);
  return kv_mtia_se_binary(d, op, cb_x, x_flags, cb_y, y_flags, y_bcast, cb_out, rows, cols, in_dtype, out_dtype);
}
#define TAIL_OP(...) binary_on(d, c.vec, __VA_ARGS__)

// This program's rows [r0, r1): a band of whole units (32-byte boundaries); false when empty.
bool band(kv_mtia_device* d, const cfg& c, int64_t* r0, int64_t* r1) {
  const int64_t units = (c.rows + c.unit - 1) / c.unit;
  const int64_t pid = kv_mtia_program_id(d), np = kv_mtia_num_programs(d);
  *r0 = units * pid / np * c.unit;
  *r1 = units * (pid + 1) / np * c.unit;
  if (*r1 > c.rows) *r1 = c.rows;
  return *r0 < *r1;
}

void program(kv_mtia_device* d, const void* user) {
  const cfg& c = *static_cast<const cfg*>(user);
  int64_t r0, r1;
  if (!band(d, c, &r0, &r1)) return;
  const int32_t cols = int32_t(c.cols);
  const int32_t io = int32_t(c.chunk_rows * c.row_bytes), f = int32_t(c.chunk_rows * c.cols * 4);
  const int32_t st = int32_t(c.chunk_rows * 4) < 32 ? 32 : int32_t(c.chunk_rows * 4);
  const int s = c.slots;
  const int cb_x = kv_mtia_cb_alloc(d, io, s);
  const int cb_y = kv_mtia_cb_alloc(d, io, s);
  const int cb_t = kv_mtia_cb_alloc(d, f, s);
  const int cb_u = kv_mtia_cb_alloc(d, f, s);
  const int cb_s = kv_mtia_cb_alloc(d, st, 2);
  const int cb_r = kv_mtia_cb_alloc(d, st, 2);
  const int cb_xf = widens_x(c.dtype) ? kv_mtia_cb_alloc(d, f, s) : cb_x;
#if KIND_layernorm || KIND_rmsnorm
  const int cb_g = kv_mtia_cb_alloc(d, int32_t(c.cols * 4), 1);
  {
    // 16-bit: the raw row passes through x's first slot (same producer and
    // consumer engines: DMA in, SE widen), so it takes no local memory of its own.
    const int cb_graw = c.dtype == KV_F32 ? cb_g : cb_x;
    kv_mtia_dma_in(d, cb_graw, kv_mtia_rows(c.gamma, 1, c.row_bytes, c.row_bytes));
    if (c.dtype != KV_F32) kv_mtia_se_unary(d, KV_OP_COPY, cb_graw, KV_CB_POP, cb_g, 1, cols, c.dtype, KV_F32, 1.0f, 0.0f);
  }
#endif
#if KIND_layernorm
  // On the SE alone, w = v * gamma is written and read by the SE after it
  // read u: it can share u's buffer (one producer and one consumer engine).
  // With the vector core's tail, w is the vector core's and needs its own.
  const int cb_w = c.vec ? kv_mtia_cb_alloc(d, f, s) : cb_u;
  const int cb_v = kv_mtia_cb_alloc(d, f, s);
  const int cb_be = kv_mtia_cb_alloc(d, int32_t(c.cols * 4), 1);
  {
    const int cb_braw = c.dtype == KV_F32 ? cb_be : cb_x;  // as gamma's
    kv_mtia_dma_in(d, cb_braw, kv_mtia_rows(c.beta, 1, c.row_bytes, c.row_bytes));
    if (c.dtype != KV_F32) kv_mtia_se_unary(d, KV_OP_COPY, cb_braw, KV_CB_POP, cb_be, 1, cols, c.dtype, KV_F32, 1.0f, 0.0f);
  }
#endif
  for (int64_t r = r0; r < r1; r += c.chunk_rows) {
    const int32_t n = int32_t(r1 - r < c.chunk_rows ? r1 - r : c.chunk_rows);
    const int64_t bytes = n * c.row_bytes;
    kv_mtia_dma_in(d, cb_x, kv_mtia_rows(c.x + uint64_t(r * c.row_bytes), 1, bytes, bytes));
    if (widens_x(c.dtype)) kv_mtia_se_unary(d, KV_OP_COPY, cb_x, KV_CB_POP, cb_xf, n, cols, c.dtype, KV_F32, 1.0f, 0.0f);
#if KIND_softmax
    // The max and the subtraction read x (in its own dtype): both on one
    // engine (the vector core with KVP_VEC_TAIL), exp, sum and divide on the SE.
    TAIL_OP(KV_OP_RMAX, cb_x, KV_CB_KEEP, -1, 0, 0, cb_s, n, cols, c.dtype, c.dtype);
    TAIL_OP(KV_OP_SUB, cb_x, KV_CB_POP, cb_s, KV_CB_POP, KV_Y_COL, cb_t, n, cols, c.dtype, KV_F32);
    kv_mtia_se_unary(d, KV_OP_EXP, cb_t, KV_CB_POP, cb_u, n, cols, KV_F32, KV_F32, 1.0f, 0.0f);
    kv_mtia_se_binary(d, KV_OP_SUM, cb_u, KV_CB_KEEP, -1, 0, 0, cb_r, n, cols, KV_F32, KV_F32);
    kv_mtia_se_binary(d, KV_OP_DIV, cb_u, KV_CB_POP, cb_r, KV_CB_POP, KV_Y_COL, cb_y, n, cols, KV_F32, c.dtype);
#elif KIND_rmsnorm
    kv_mtia_se_unary(d, KV_OP_SQUARE, cb_xf, KV_CB_KEEP, cb_t, n, cols, KV_F32, KV_F32, 1.0f, 0.0f);
    kv_mtia_se_binary(d, KV_OP_SUM, cb_t, KV_CB_POP, -1, 0, 0, cb_s, n, cols, KV_F32, KV_F32);
    kv_mtia_se_unary(d, KV_OP_RSQRT, cb_s, KV_CB_POP, cb_r, 1, n, KV_F32, KV_F32, 1.0f / float(c.cols), c.eps);
    kv_mtia_se_binary(d, KV_OP_MUL, cb_xf, KV_CB_POP, cb_r, KV_CB_POP, KV_Y_COL, cb_u, n, cols, KV_F32, KV_F32);
    TAIL_OP(KV_OP_MUL, cb_u, KV_CB_POP, cb_g, KV_CB_KEEP, KV_Y_ROW, cb_y, n, cols, KV_F32, c.dtype);
#else  // layernorm
    kv_mtia_se_binary(d, KV_OP_SUM, cb_xf, KV_CB_KEEP, -1, 0, 0, cb_s, n, cols, KV_F32, KV_F32);
    kv_mtia_se_unary(d, KV_OP_COPY, cb_s, KV_CB_POP, cb_r, 1, n, KV_F32, KV_F32, -1.0f / float(c.cols), 0.0f);
    kv_mtia_se_binary(d, KV_OP_ADD, cb_xf, KV_CB_POP, cb_r, KV_CB_POP, KV_Y_COL, cb_t, n, cols, KV_F32, KV_F32);
    kv_mtia_se_unary(d, KV_OP_SQUARE, cb_t, KV_CB_KEEP, cb_u, n, cols, KV_F32, KV_F32, 1.0f, 0.0f);
    kv_mtia_se_binary(d, KV_OP_SUM, cb_u, KV_CB_POP, -1, 0, 0, cb_s, n, cols, KV_F32, KV_F32);
    kv_mtia_se_unary(d, KV_OP_RSQRT, cb_s, KV_CB_POP, cb_r, 1, n, KV_F32, KV_F32, 1.0f / float(c.cols), c.eps);
    kv_mtia_se_binary(d, KV_OP_MUL, cb_t, KV_CB_POP, cb_r, KV_CB_POP, KV_Y_COL, cb_v, n, cols, KV_F32, KV_F32);
    TAIL_OP(KV_OP_MUL, cb_v, KV_CB_POP, cb_g, KV_CB_KEEP, KV_Y_ROW, cb_w, n, cols, KV_F32, KV_F32);
    TAIL_OP(KV_OP_ADD, cb_w, KV_CB_POP, cb_be, KV_CB_KEEP, KV_Y_ROW, cb_y, n, cols, KV_F32, c.dtype);
#endif
    kv_mtia_dma_out(d, kv_mtia_rows(c.y + uint64_t(r * c.row_bytes), 1, bytes, bytes), cb_y, KV_CB_POP);
  }
}

#if RE_STATS
// KVP_RE_STATS: the row statistics on the reduction engine, so the SE keeps
// only the passes that write new values (knowledge/hardware/mtia2i/
// optimization.md, "Row statistics on the RE"). x goes to the RE, which
// loads it into an accumulator (a segment sum with one row per segment) and
// drains it for the SE in fp32 (softmax: in x's own dtype, exactly).
//   softmax:   the RE's per-row max (kv_mtia_re_minmax) replaces RMAX; the
//              SE (or with KVP_VEC_TAIL, where it fits, the vector core)
//              subtracts it, the SE exponentiates, sums and divides. The
//              first chunk goes to the SE alone (its own RMAX) while the RE
//              loads the second.
//   layernorm: the row sums of x (a 16-bit x: on the DPE, x times a column
//              of ones; fp32: RE segment sums of `per` pieces of w values,
//              then an SE sum of the w partials) and of (x - mean)^2 (RE
//              segment sums); the SE centres, squares, scales and applies
//              gamma; beta on the SE or (KVP_VEC_TAIL, where it fits) the
//              vector core. Three stages, issued two chunks apart (A: x in,
//              its sums and fp32 copy; B: centre, square, RE sum of squares;
//              C: scale, gamma, beta, out), so neither in-order engine waits
//              on the other's round trip.
// re_sizes() picks the chunk, the slots and whether the vector core's share
// fits (c.vec); it returns false where one chunk does not fit the
// accumulators or local memory (the SE chain runs then).

#define KV_RE_MAX_ROWS 1024 /* rows of a chunk: one segment boundary each */

int32_t max32(int32_t a, int32_t b) { return a > b ? a : b; }

// Boundaries 0, per, 2*per, ... (rows + 1 values): segment s is row s of a
// chunk seen as rows*per pieces of cols/per values.
int push_bounds(kv_mtia_device* d, int64_t rows, int64_t per) {
  const int cb = kv_mtia_cb_alloc(d, int32_t(((rows + 1) * 4 + 31) / 32 * 32), 1);
  int64_t v[KV_RE_MAX_ROWS + 1];
  for (int64_t i = 0; i <= rows; ++i) v[i] = i * per;
  kv_mtia_sc_push_int(d, cb, KV_I32, v, int32_t(rows + 1));
  return cb;
}

#if KIND_softmax
void program_re(kv_mtia_device* d, const void* user) {
  const cfg& c = *static_cast<const cfg*>(user);
  int64_t r0, r1;
  if (!band(d, c, &r0, &r1)) return;
  const int32_t cols = int32_t(c.cols);
  const int32_t io = int32_t(c.chunk_rows * c.row_bytes), f = int32_t(c.chunk_rows * c.cols * 4);
  const int32_t st = max32(int32_t(c.chunk_rows * 4), 32);
  const int s = c.slots;
  const int cb_x = kv_mtia_cb_alloc(d, io, s);   // DMA -> RE
  const int cb_xe = kv_mtia_cb_alloc(d, io, s);  // RE -> SE (or vector core): x as drained
  const int cb_y = kv_mtia_cb_alloc(d, io, s);   // SE -> DMA
  const int cb_t = kv_mtia_cb_alloc(d, f, c.vec ? s : 1);
  const int cb_u = kv_mtia_cb_alloc(d, f, 1);    // SE -> SE
  const int cb_mm = kv_mtia_cb_alloc(d, 2 * st, 2);
  const int cb_m = kv_mtia_cb_alloc(d, st, 2);
  const int cb_r = kv_mtia_cb_alloc(d, st, 2);
  const int bnd = push_bounds(d, c.chunk_rows, 1);
  int acc[2];
  acc[0] = kv_mtia_acc_alloc(d, int32_t(c.chunk_rows), cols);
  acc[1] = c.accs > 1 ? kv_mtia_acc_alloc(d, int32_t(c.chunk_rows), cols) : acc[0];
  // The first chunk goes to the SE directly (its own max by RMAX): the SE
  // would otherwise idle through the chunk's three RE passes, while the RE
  // gets on with the second chunk.
  const int cb_x0 = c.first_on_se ? kv_mtia_cb_alloc(d, io, 1) : -1;  // DMA -> SE
  const int cb_m0 = c.first_on_se ? kv_mtia_cb_alloc(d, st, 1) : -1;  // SE -> SE
  int k = 0;
  for (int64_t r = r0; r < r1; r += c.chunk_rows, ++k) {
    const int32_t n = int32_t(r1 - r < c.chunk_rows ? r1 - r : c.chunk_rows);
    const int64_t bytes = n * c.row_bytes;
    const kv_mtia_view src = kv_mtia_rows(c.x + uint64_t(r * c.row_bytes), 1, bytes, bytes);
    if (k == 0 && c.first_on_se) {
      kv_mtia_dma_in(d, cb_x0, src);
      kv_mtia_se_binary(d, KV_OP_RMAX, cb_x0, KV_CB_KEEP, -1, 0, 0, cb_m0, n, cols, c.dtype, c.dtype);
      kv_mtia_se_binary(d, KV_OP_SUB, cb_x0, KV_CB_POP, cb_m0, KV_CB_POP, KV_Y_COL, cb_t, n, cols, c.dtype, KV_F32);
    } else {
      const kv_mtia_segments one = {bnd, KV_CB_KEEP, KV_I32, 0, n};
      const int a = acc[k & 1];
      kv_mtia_dma_in(d, cb_x, src);
      kv_mtia_re_segment_sum(d, cb_x, KV_CB_POP, n, cols, c.dtype, 0, &one, a, KV_MM_ZERO);
      kv_mtia_re_minmax(d, a, cb_mm);
      kv_mtia_re_drain(d, a, cb_xe, c.dtype, KV_OP_COPY, -1, 0);
      // the max is the second value of each row's (min, max) pair
      kv_mtia_mlu_copy(d, cb_mm, KV_CB_POP, 4, n, 4, 8, cb_m);
      TAIL_OP(KV_OP_SUB, cb_xe, KV_CB_POP, cb_m, KV_CB_POP, KV_Y_COL, cb_t, n, cols, c.dtype, KV_F32);
    }
    kv_mtia_se_unary(d, KV_OP_EXP, cb_t, KV_CB_POP, cb_u, n, cols, KV_F32, KV_F32, 1.0f, 0.0f);
    kv_mtia_se_binary(d, KV_OP_SUM, cb_u, KV_CB_KEEP, -1, 0, 0, cb_r, n, cols, KV_F32, KV_F32);
    kv_mtia_se_binary(d, KV_OP_DIV, cb_u, KV_CB_POP, cb_r, KV_CB_POP, KV_Y_COL, cb_y, n, cols, KV_F32, c.dtype);
    kv_mtia_dma_out(d, kv_mtia_rows(c.y + uint64_t(r * c.row_bytes), 1, bytes, bytes), cb_y, KV_CB_POP);
  }
}
#elif KIND_layernorm
void program_re(kv_mtia_device* d, const void* user) {
  const cfg& c = *static_cast<const cfg*>(user);
  int64_t r0, r1;
  if (!band(d, c, &r0, &r1)) return;
  const int32_t cols = int32_t(c.cols), W = int32_t(c.w), per = int32_t(c.cols / c.w);
  const int32_t io = int32_t(c.chunk_rows * c.row_bytes), f = int32_t(c.chunk_rows * c.cols * 4);
  const int32_t st = max32(int32_t(c.chunk_rows * 4), 32), pw = max32(int32_t(c.chunk_rows * W * 4), 32);
  const int s = c.slots;
  // A 16-bit x also goes to the DPE, whose product with a column of ones
  // sums each row exactly in fp32 (c.dpe): the MLU copies x for it and for
  // the RE, which then only loads and drains x and sums the squares.
  const int cb_x = kv_mtia_cb_alloc(d, io, s);    // DMA -> RE (c.dpe: -> MLU)
  const int cb_xd = c.dpe ? kv_mtia_cb_alloc(d, io, s) : -1;      // MLU -> DPE
  const int cb_xr = c.dpe ? kv_mtia_cb_alloc(d, io, s) : cb_x;    // MLU -> RE
  const int cb_xf = kv_mtia_cb_alloc(d, f, s);    // RE -> SE: x in fp32
  const int cb_sq = kv_mtia_cb_alloc(d, f, s);    // SE -> RE: (x - mean)^2
  const int cb_y = kv_mtia_cb_alloc(d, io, s);    // SE or vector core -> DMA
  const int cb_ts[2] = {kv_mtia_cb_alloc(d, f, 1), kv_mtia_cb_alloc(d, f, 1)};  // x - mean, chunks alternating
  // v = t * rstd and w = v * gamma: the SE writes and reads both in order, so
  // they share a buffer; with the vector core's beta, w is its own.
  const int cb_v = kv_mtia_cb_alloc(d, f, c.vec ? 1 : 2);
  const int cb_w = c.vec ? kv_mtia_cb_alloc(d, f, s) : cb_v;
  const int cb_p1 = kv_mtia_cb_alloc(d, pw, 3);   // RE -> SE: partial sums of x
  const int cb_p2 = kv_mtia_cb_alloc(d, pw, 2);   // RE -> SE: partial sums of squares
  const int cb_s = kv_mtia_cb_alloc(d, st, 2);
  const int cb_m = kv_mtia_cb_alloc(d, st, 2);
  const int cb_r = kv_mtia_cb_alloc(d, st, 2);
  const int cb_g = kv_mtia_cb_alloc(d, int32_t(c.cols * 4), 1);
  const int cb_be = kv_mtia_cb_alloc(d, int32_t(c.cols * 4), 1);
  if (c.dtype == KV_F32) {
    kv_mtia_dma_in(d, cb_g, kv_mtia_rows(c.gamma, 1, c.row_bytes, c.row_bytes));
    kv_mtia_dma_in(d, cb_be, kv_mtia_rows(c.beta, 1, c.row_bytes, c.row_bytes));
  } else {
    // 16-bit gamma and beta pass through x's buffer: its consumer, the RE,
    // loads each into a one-row accumulator and drains it widened.
    const int acc_p = kv_mtia_acc_alloc(d, 1, cols);
    const int bnd_p = push_bounds(d, 1, 1);
    const kv_mtia_segments keep = {bnd_p, KV_CB_KEEP, KV_I32, 0, 1}, last = {bnd_p, KV_CB_POP, KV_I32, 0, 1};
    kv_mtia_dma_in(d, cb_x, kv_mtia_rows(c.gamma, 1, c.row_bytes, c.row_bytes));
    if (c.dpe) kv_mtia_mlu_copy(d, cb_x, KV_CB_POP, 0, 1, int32_t(c.row_bytes), int32_t(c.row_bytes), cb_xr);
    kv_mtia_re_segment_sum(d, cb_xr, KV_CB_POP, 1, cols, c.dtype, 0, &keep, acc_p, KV_MM_ZERO);
    kv_mtia_re_drain(d, acc_p, cb_g, KV_F32, KV_OP_COPY, -1, 0);
    kv_mtia_dma_in(d, cb_x, kv_mtia_rows(c.beta, 1, c.row_bytes, c.row_bytes));
    if (c.dpe) kv_mtia_mlu_copy(d, cb_x, KV_CB_POP, 0, 1, int32_t(c.row_bytes), int32_t(c.row_bytes), cb_xr);
    kv_mtia_re_segment_sum(d, cb_xr, KV_CB_POP, 1, cols, c.dtype, 0, &last, acc_p, KV_MM_ZERO);
    kv_mtia_re_drain(d, acc_p, cb_be, KV_F32, KV_OP_COPY, -1, 0);
  }
  if (c.dpe) {
    const int cb_ones = kv_mtia_cb_alloc(d, max32(int32_t(c.cols * 2), 32), 1);
    kv_mtia_se_fill(d, cb_ones, cols, 1, c.dtype, 1.0f);
    kv_mtia_dpe_load_b(d, cb_ones, cols, 1, c.dtype, 0);
  }
  const int bnd = push_bounds(d, c.chunk_rows, per);  // a row's pieces
  const int bnd1 = push_bounds(d, c.chunk_rows, 1);   // whole rows
  int ax[2], a1[2], a2[2];
  ax[0] = kv_mtia_acc_alloc(d, int32_t(c.chunk_rows), cols);
  ax[1] = c.accs > 1 ? kv_mtia_acc_alloc(d, int32_t(c.chunk_rows), cols) : ax[0];
  for (int i = 0; i < 2; ++i) {
    a1[i] = kv_mtia_acc_alloc(d, int32_t(c.chunk_rows), c.dpe ? 1 : W);
    a2[i] = kv_mtia_acc_alloc(d, int32_t(c.chunk_rows), W);
  }
  // a DPE product's accumulator has its rows: the band's last, shorter chunk needs its own
  const int32_t tail = int32_t((r1 - r0) % c.chunk_rows);
  const int a1_tail = c.dpe && tail ? kv_mtia_acc_alloc(d, tail, 1) : -1;
  auto rows_at = [&](int64_t r) { return int32_t(r1 - r < c.chunk_rows ? r1 - r : c.chunk_rows); };
  auto stage_a = [&](int64_t r, int k) {
    const int32_t n = rows_at(r);
    const int64_t bytes = n * c.row_bytes;
    const kv_mtia_segments pieces = {bnd, KV_CB_KEEP, KV_I32, 0, n};
    const kv_mtia_segments rows = {bnd1, KV_CB_KEEP, KV_I32, 0, n};
    kv_mtia_dma_in(d, cb_x, kv_mtia_rows(c.x + uint64_t(r * c.row_bytes), 1, bytes, bytes));
    const int sum_acc = c.dpe && n < c.chunk_rows ? a1_tail : a1[k & 1];
    if (c.dpe) {
      kv_mtia_mlu_copy(d, cb_x, KV_CB_KEEP, 0, 1, int32_t(bytes), int32_t(bytes), cb_xd);
      kv_mtia_mlu_copy(d, cb_x, KV_CB_POP, 0, 1, int32_t(bytes), int32_t(bytes), cb_xr);
      kv_mtia_dpe_mm(d, cb_xd, n, cols, cols, sum_acc, KV_MM_ZERO);
    } else {
      kv_mtia_re_segment_sum(d, cb_x, KV_CB_KEEP, n * per, W, c.dtype, 0, &pieces, sum_acc, KV_MM_ZERO);
    }
    kv_mtia_re_segment_sum(d, cb_xr, KV_CB_POP, n, cols, c.dtype, 0, &rows, ax[k & 1], KV_MM_ZERO);
    kv_mtia_re_drain(d, sum_acc, cb_p1, KV_F32, KV_OP_COPY, -1, 0);
    kv_mtia_re_drain(d, ax[k & 1], cb_xf, KV_F32, KV_OP_COPY, -1, 0);
  };
  auto stage_b = [&](int64_t r, int k) {
    const int32_t n = rows_at(r);
    const kv_mtia_segments pieces = {bnd, KV_CB_KEEP, KV_I32, 0, n};
    kv_mtia_se_binary(d, KV_OP_SUM, cb_p1, KV_CB_POP, -1, 0, 0, cb_s, n, c.dpe ? 1 : W, KV_F32, KV_F32);
    kv_mtia_se_unary(d, KV_OP_COPY, cb_s, KV_CB_POP, cb_m, 1, n, KV_F32, KV_F32, -1.0f / float(c.cols), 0.0f);
    kv_mtia_se_binary(d, KV_OP_ADD, cb_xf, KV_CB_POP, cb_m, KV_CB_POP, KV_Y_COL, cb_ts[k & 1], n, cols, KV_F32, KV_F32);
    kv_mtia_se_unary(d, KV_OP_SQUARE, cb_ts[k & 1], KV_CB_KEEP, cb_sq, n, cols, KV_F32, KV_F32, 1.0f, 0.0f);
    kv_mtia_re_segment_sum(d, cb_sq, KV_CB_POP, n * per, W, KV_F32, 0, &pieces, a2[k & 1], KV_MM_ZERO);
    kv_mtia_re_drain(d, a2[k & 1], cb_p2, KV_F32, KV_OP_COPY, -1, 0);
  };
  auto stage_c = [&](int64_t r, int k) {
    const int32_t n = rows_at(r);
    const int64_t bytes = n * c.row_bytes;
    kv_mtia_se_binary(d, KV_OP_SUM, cb_p2, KV_CB_POP, -1, 0, 0, cb_s, n, W, KV_F32, KV_F32);
    kv_mtia_se_unary(d, KV_OP_RSQRT, cb_s, KV_CB_POP, cb_r, 1, n, KV_F32, KV_F32, 1.0f / float(c.cols), c.eps);
    kv_mtia_se_binary(d, KV_OP_MUL, cb_ts[k & 1], KV_CB_POP, cb_r, KV_CB_POP, KV_Y_COL, cb_v, n, cols, KV_F32, KV_F32);
    kv_mtia_se_binary(d, KV_OP_MUL, cb_v, KV_CB_POP, cb_g, KV_CB_KEEP, KV_Y_ROW, cb_w, n, cols, KV_F32, KV_F32);
    TAIL_OP(KV_OP_ADD, cb_w, KV_CB_POP, cb_be, KV_CB_KEEP, KV_Y_ROW, cb_y, n, cols, KV_F32, c.dtype);
    kv_mtia_dma_out(d, kv_mtia_rows(c.y + uint64_t(r * c.row_bytes), 1, bytes, bytes), cb_y, KV_CB_POP);
  };
  const int64_t cr = c.chunk_rows;
  stage_a(r0, 0);
  if (r0 + cr < r1) stage_a(r0 + cr, 1);
  stage_b(r0, 0);
  int k = 0;
  for (int64_t r = r0; r < r1; r += cr, ++k) {
    if (r + 2 * cr < r1) stage_a(r + 2 * cr, k + 2);
    if (r + cr < r1) stage_b(r + cr, k + 1);
    stage_c(r, k);
  }
}
#endif

// Chunk rows, slots and accumulators for program_re; false when no chunk fits.
bool re_sizes(cfg& c, kv_mtia_device* dev) {
  const int64_t acc_bytes = kv_mtia_query(dev, KV_MTIA_Q_ACC_BYTES);
  const int64_t ls = kv_mtia_query(dev, KV_MTIA_Q_LS_BYTES) - 16384;
  // A quarter of KVP_CHUNK_KB: this pipeline keeps more chunks in flight
  // (two accumulators, and layernorm's three stages), and a chunk's RE work
  // comes before its SE work, so a long chunk delays the SE's start and
  // leaves it alone at the end.
  int64_t rows = int64_t(KVP_CHUNK_KB) * 256 / c.row_bytes;
  rows -= rows % c.unit;
  c.chunk_rows = rows < c.unit ? c.unit : rows;
  if (c.chunk_rows > c.rows) c.chunk_rows = c.rows;
  // layernorm's 16-bit row sums on the DPE (its B, N ones, fits the B-cache:
  // the accumulators below already hold N <= 16K for a 16-bit row)
  c.dpe = KIND_layernorm && c.dtype != KV_F32;
  c.w = 1;  // layernorm's piece width: the widest divisor of N up to 32
  for (int64_t w = 32; w >= 1; --w)
    if (c.cols % w == 0) {
      c.w = w;
      break;
    }
  // accumulators: x's rows, once or twice (double-buffered),
  // plus, for layernorm, four w-wide partial tiles and a 16-bit gamma/beta row)
  const int64_t params = KIND_layernorm && c.dtype != KV_F32 ? c.cols * 4 : 0;
  auto acc_need = [&](int64_t rows, int copies) {
    return copies * rows * c.cols * 4 + (KIND_layernorm ? 4 * rows * c.w * 4 + 3 * rows * 4 : 0) + params;
  };
  while (c.chunk_rows > c.unit && (c.chunk_rows > KV_RE_MAX_ROWS || acc_need(c.chunk_rows, 1) > acc_bytes))
    c.chunk_rows -= c.unit;
  if (c.chunk_rows > KV_RE_MAX_ROWS || acc_need(c.chunk_rows, 1) > acc_bytes) return false;
  c.accs = acc_need(c.chunk_rows, 2) <= acc_bytes ? 2 : 1;
  const int64_t m = c.chunk_rows, io = m * c.row_bytes, f = m * c.cols * 4, st = m * 4 < 32 ? 32 : m * 4;
  const int64_t bnd = ((m + 1) * 4 + 31) / 32 * 32;
  // with the vector core's share if it fits, else without it
  for (int vec = KVP_VEC_TAIL; vec >= 0; --vec) {
#if KIND_softmax
    const int64_t per_slot = 3 * io + (vec ? f : 0);
    const int64_t fixed = (vec ? 0 : f) + f + 8 * st + bnd;
    // the first chunk's own buffer where it fits beside two slots
    c.first_on_se = !vec && fixed + io + st + 2 * per_slot <= ls;
    if (fixed + (c.first_on_se ? io + st : 0) + per_slot > ls) continue;
    const int64_t room = ls - (c.first_on_se ? io + st : 0);
#else
    const int64_t pw = m * c.w * 4 < 32 ? 32 : m * c.w * 4;
    const int64_t per_slot = (c.dpe ? 4 : 2) * io + 2 * f + (vec ? f : 0);
    const int64_t ones = c.dpe ? (c.cols * 2 < 32 ? 32 : (c.cols * 2 + 31) / 32 * 32) : 0;
    const int64_t fixed = 2 * f + (vec ? 1 : 2) * f + 5 * pw + 6 * st + 2 * c.cols * 4 + 2 * bnd + 32 + ones;
    if (fixed + per_slot > ls) continue;
    const int64_t room = ls;
#endif
    int64_t slots = (room - fixed) / per_slot;
    if (slots > KVP_SLOTS) slots = KVP_SLOTS;
    c.slots = int32_t(slots < 1 ? 1 : slots);
    c.vec = vec;
    return true;
  }
  return false;
}

#endif

int64_t gcd64(int64_t a, int64_t b) { return b ? gcd64(b, a % b) : a; }

}  // namespace

extern "C" int kevolve_kernel(const kv_args* a, kv_mtia_device* dev) {
  cfg c;
  const kv_tensor& x = a->inputs[0];
  c.x = kv_mtia_addr(&x);
  c.gamma = a->num_inputs > 1 ? kv_mtia_addr(&a->inputs[1]) : 0;
  c.beta = a->num_inputs > 2 ? kv_mtia_addr(&a->inputs[2]) : 0;
  c.y = kv_mtia_addr(&a->outputs[0]);
  c.eps = a->num_params > 0 ? float(kv_param_f(a, 0)) : 0.0f;
  c.dtype = x.dtype;
  const int64_t esz = x.dtype == KV_F32 ? 4 : 2;
  c.cols = x.dims[x.rank - 1];
  c.rows = kv_numel(&x) / c.cols;
  c.row_bytes = c.cols * esz;
  c.unit = 32 / gcd64(c.row_bytes, 32);
  int64_t rows = int64_t(KVP_CHUNK_KB) * 1024 / c.row_bytes;
  rows -= rows % c.unit;
  c.chunk_rows = rows < c.unit ? c.unit : rows;
  if (c.chunk_rows > c.rows) c.chunk_rows = c.rows;  // one chunk holds every row
#if RE_STATS
  {
    cfg re = c;
    if (re_sizes(re, dev)) return kv_mtia_launch(dev, kv_mtia_grid_rows(dev) * kv_mtia_grid_cols(dev), program_re, &re);
  }
#endif
  // Local memory as program() allocates it: per slot x and y (the I/O dtype)
  // and the fp32 stages of the chain (one more to widen a 16-bit x, but
  // softmax reads it as it is); once the row statistics (2 CBs x 2 slots) and
  // gamma/beta (fp32; a 16-bit raw row passes through x's buffer); 16 KiB of
  // slack. The vector core's share takes its place where one chunk of unit
  // rows holds its buffer, else the SE does it all.
  const int64_t ls = kv_mtia_query(dev, KV_MTIA_Q_LS_BYTES) - 16384;
  auto fixed = [&](int64_t chunk) {
    const int64_t st = chunk * 4 < 32 ? 32 : chunk * 4;
    return 4 * st + PARAM_ROWS * c.cols * 4;
  };
  const int64_t want_rows = c.chunk_rows;
  for (int vec = KVP_VEC_TAIL; vec >= 0; --vec) {
    const int64_t n_f32 = F32_STAGES(vec) + (widens_x(c.dtype) ? 1 : 0);
    auto per_slot_bytes = [&](int64_t chunk) { return 2 * chunk * c.row_bytes + n_f32 * chunk * c.cols * 4; };
    c.chunk_rows = want_rows;
    while (per_slot_bytes(c.chunk_rows) + fixed(c.chunk_rows) > ls && c.chunk_rows > c.unit) c.chunk_rows -= c.unit;
    c.vec = vec;
    const int64_t per_slot = per_slot_bytes(c.chunk_rows);
    if (vec && per_slot + fixed(c.chunk_rows) > ls) continue;
    int64_t slots = (ls - fixed(c.chunk_rows)) / (per_slot > 0 ? per_slot : 1);
    if (slots > KVP_SLOTS) slots = KVP_SLOTS;
    c.slots = int32_t(slots < 1 ? 1 : slots);
    break;
  }
  const int32_t pes = kv_mtia_grid_rows(dev) * kv_mtia_grid_cols(dev);
  return kv_mtia_launch(dev, pes, program, &c);
}
