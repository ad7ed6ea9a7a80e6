// knowledge/examples/mtia_emu/layernorm.cpp: an honest mtia_emu kernel of layernorm (kevolve eval --backend mtia_emu).
// knowledge/templates/mtia_emu/row_norm.cpp.tmpl with the parameters below: triple-buffered CBs, 16 KiB chunks,
// every pass on the SE (w in u's buffer, so that a 16-bit row of 1003 fits in local memory).
#define KVP_SLOTS 3
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
// is short.
#include <stdint.h>

#include <kevolve/abi.h>
#include <kevolve/mtia.h>

#define KIND_layernorm 1
#ifndef KIND_softmax
#define KIND_softmax 0
#endif
// Chunk-sized fp32 stages (besides a widened 16-bit x) one slot of the chain holds.
#if KIND_layernorm
#define F32_STAGES (KVP_VEC_TAIL ? 4 : 3) /* without the vector core, w shares u's buffer */
#define PARAM_ROWS 2 /* gamma, beta */
#elif KIND_rmsnorm
#define F32_STAGES 2
#define PARAM_ROWS 1
#else
#define F32_STAGES 2
#define PARAM_ROWS 0
#endif

namespace {

struct cfg {
  uint64_t x, gamma, beta, y;
  int64_t rows, cols, row_bytes, unit, chunk_rows;
  int32_t dtype, slots;
  float eps;
};

// A 16-bit x is widened to fp32 once per chunk, except for softmax, which
// reads it as it is (its row max is exact in its dtype; x - max is formed in fp32).
bool widens_x(int32_t dtype) { return dtype != KV_F32 && !KIND_softmax; }

#if KVP_VEC_TAIL
#define TAIL_OP(op, x, xf, y, yf, bc, out, n, cols, in, od) \
  kv_mtia_vec_op(d, op, x, xf, y, yf, bc, out, n, cols, in, od, 1.0f, 0.0f)
#else
#define TAIL_OP(op, x, xf, y, yf, bc, out, n, cols, in, od) kv_mtia_se_binary(d, op, x, xf, y, yf, bc, out, n, cols, in, od)
#endif

void program(kv_mtia_device* d, const void* user) {
  const cfg& c = *static_cast<const cfg*>(user);
  const int64_t units = (c.rows + c.unit - 1) / c.unit;
  const int64_t pid = kv_mtia_program_id(d), np = kv_mtia_num_programs(d);
  const int64_t r0 = units * pid / np * c.unit;
  int64_t r1 = units * (pid + 1) / np * c.unit;
  if (r1 > c.rows) r1 = c.rows;
  if (r0 >= r1) return;
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
  const int cb_w = KVP_VEC_TAIL ? kv_mtia_cb_alloc(d, f, s) : cb_u;
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
  // Local memory as program() allocates it: per slot x and y (the I/O dtype)
  // and the fp32 stages of the chain (one more to widen a 16-bit x, but softmax reads it as it is); once the
  // row statistics (2 CBs x 2 slots) and gamma/beta (fp32; a 16-bit raw row
  // passes through x's buffer); 16 KiB of slack.
  const int64_t n_f32 = F32_STAGES + (widens_x(c.dtype) ? 1 : 0);
  auto fixed = [&](int64_t chunk) {
    const int64_t st = chunk * 4 < 32 ? 32 : chunk * 4;
    return 4 * st + PARAM_ROWS * c.cols * 4;
  };
  auto per_slot_bytes = [&](int64_t chunk) { return 2 * chunk * c.row_bytes + n_f32 * chunk * c.cols * 4; };
  const int64_t ls = kv_mtia_query(dev, KV_MTIA_Q_LS_BYTES) - 16384;
  while (per_slot_bytes(c.chunk_rows) + fixed(c.chunk_rows) > ls && c.chunk_rows > c.unit) c.chunk_rows -= c.unit;
  const int64_t per_slot = per_slot_bytes(c.chunk_rows);
  int64_t slots = (ls - fixed(c.chunk_rows)) / (per_slot > 0 ? per_slot : 1);
  if (slots > KVP_SLOTS) slots = KVP_SLOTS;
  c.slots = int32_t(slots < 1 ? 1 : slots);
  const int32_t pes = kv_mtia_grid_rows(dev) * kv_mtia_grid_cols(dev);
  return kv_mtia_launch(dev, pes, program, &c);
}
