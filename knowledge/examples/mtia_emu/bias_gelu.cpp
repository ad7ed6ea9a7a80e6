// knowledge/examples/mtia_emu/bias_gelu.cpp: an honest mtia_emu kernel of bias_gelu (kevolve eval --backend mtia_emu).
// knowledge/templates/mtia_emu/bias_gelu.cpp.tmpl with the parameters below: double-buffered CBs, larger chunks.
#define KVP_SLOTS 2
#define KVP_CHUNK_KB 32
#define KVP_ADD_ON_VEC 1
// kevolve mtia_emu template: bias add and exact GELU (SE LUT), double-buffered DMA.
#define KVP_ACT KV_OP_GELU
// bias + activation on the MTIA-like emulator: y = act(x + bias) over [B, N].
// Each program owns a contiguous band of rows (cut at 32-byte boundaries so
// every DMA is aligned) and streams it in chunks of ~KVP_CHUNK_KB KiB:
// DMA in -> bias add (SE or vector core, bias row kept in local memory) ->
// activation on the SE's LUT -> DMA out. KVP_SLOTS CB slots per stage: 1
// serialises the stages, 2+ double-buffers DMA against compute.
#include <stdint.h>

#include <kevolve/abi.h>
#include <kevolve/mtia.h>

namespace {

struct cfg {
  uint64_t x, bias, y;
  int64_t rows, cols, row_bytes, unit;  // unit: rows per 32-byte-aligned step
  int32_t dtype, slots;
  int64_t chunk_rows;
};

void program(kv_mtia_device* d, const void* user) {
  const cfg& c = *static_cast<const cfg*>(user);
  const int64_t units = (c.rows + c.unit - 1) / c.unit;
  const int64_t pid = kv_mtia_program_id(d), np = kv_mtia_num_programs(d);
  const int64_t r0 = units * pid / np * c.unit;
  int64_t r1 = units * (pid + 1) / np * c.unit;
  if (r1 > c.rows) r1 = c.rows;
  if (r0 >= r1) return;
  const int32_t chunk_bytes = int32_t(c.chunk_rows * c.row_bytes);
  const int cb_b = kv_mtia_cb_alloc(d, int32_t(c.row_bytes), 1);
  const int cb_x = kv_mtia_cb_alloc(d, chunk_bytes, c.slots);
  const int cb_t = kv_mtia_cb_alloc(d, int32_t(c.chunk_rows * c.cols * 4), c.slots);
  const int cb_y = kv_mtia_cb_alloc(d, chunk_bytes, c.slots);
  kv_mtia_dma_in(d, cb_b, kv_mtia_rows(c.bias, 1, c.row_bytes, c.row_bytes));
  for (int64_t r = r0; r < r1; r += c.chunk_rows) {
    const int64_t n = r1 - r < c.chunk_rows ? r1 - r : c.chunk_rows;
    const int64_t bytes = n * c.row_bytes;
    kv_mtia_dma_in(d, cb_x, kv_mtia_rows(c.x + uint64_t(r * c.row_bytes), 1, bytes, bytes));
#if KVP_ADD_ON_VEC
    kv_mtia_vec_op(d, KV_OP_ADD, cb_x, KV_CB_POP, cb_b, KV_CB_KEEP, KV_Y_ROW, cb_t, int32_t(n), int32_t(c.cols),
                   c.dtype, KV_F32, 1.0f, 0.0f);
#else
    kv_mtia_se_binary(d, KV_OP_ADD, cb_x, KV_CB_POP, cb_b, KV_CB_KEEP, KV_Y_ROW, cb_t, int32_t(n), int32_t(c.cols),
                      c.dtype, KV_F32);
#endif
    kv_mtia_se_unary(d, KVP_ACT, cb_t, KV_CB_POP, cb_y, int32_t(n), int32_t(c.cols), KV_F32, c.dtype, 1.0f, 0.0f);
    kv_mtia_dma_out(d, kv_mtia_rows(c.y + uint64_t(r * c.row_bytes), 1, bytes, bytes), cb_y, KV_CB_POP);
  }
}

int64_t gcd64(int64_t a, int64_t b) { return b ? gcd64(b, a % b) : a; }

}  // namespace

extern "C" int kevolve_kernel(const kv_args* a, kv_mtia_device* dev) {
  cfg c;
  const kv_tensor& x = a->inputs[0];
  c.x = kv_mtia_addr(&x);
  c.bias = kv_mtia_addr(&a->inputs[1]);
  c.y = kv_mtia_addr(&a->outputs[0]);
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
  // Local memory: x, y (esz) and the fp32 sum per slot, plus the bias row.
  const int64_t budget = kv_mtia_query(dev, KV_MTIA_Q_LS_BYTES) - c.row_bytes - 16384;
  while ((2 * esz + 4) * c.chunk_rows * c.cols > budget && c.chunk_rows > c.unit) c.chunk_rows -= c.unit;
  int64_t slots = budget / ((2 * esz + 4) * c.chunk_rows * c.cols);
  if (slots > KVP_SLOTS) slots = KVP_SLOTS;
  c.slots = int32_t(slots < 1 ? 1 : slots);
  const int32_t pes = kv_mtia_grid_rows(dev) * kv_mtia_grid_cols(dev);
  return kv_mtia_launch(dev, pes, program, &c);
}
