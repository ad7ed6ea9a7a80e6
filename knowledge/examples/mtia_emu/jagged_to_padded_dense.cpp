// knowledge/examples/mtia_emu/jagged_to_padded_dense.cpp: an honest mtia_emu kernel of jagged_to_padded_dense (kevolve eval --backend mtia_emu).
// knowledge/templates/mtia_emu/jagged_to_padded_dense.cpp.tmpl with the parameters below: contiguous copies per sequence, offsets prefetched, three CB slots.
#define KVP_SLOTS 3
#define KVP_SEQ_BLOCK 16
#define KVP_GATHER_ROWS 64
#define KVP_CONTIG 1
#define KVP_PREFETCH 1
// Jagged to padded dense on the MTIA-like emulator: out[b, l] = values[
// offsets[b] + l] for l < min(len_b, L), zeros after. Each program owns a
// range of sequences (cut so that its output starts 32-byte aligned) and
// walks it in blocks of KVP_SEQ_BLOCK sequences: DMA offsets -> the scalar
// core peeks them -> per sequence either
//   KVP_CONTIG = 1 (rows 32-byte multiples): one DMA in of the kept rows, one
//   DMA out of them and one DMA out of zeros for the padding, or
//   KVP_CONTIG = 0 (any shape): a padded indexed gather of up to
//   KVP_GATHER_ROWS output rows (row ids from the scalar core, -1 = zeros),
//   one DMA out per gather.
// KVP_PREFETCH DMAs the next block's offsets ahead of this block's copies;
// KVP_SLOTS CB slots let reads run ahead of writes.
// Shared pieces of the jagged templates (jagged_to_padded_dense,
// sequence_truncate) on the MTIA-like emulator: offsets DMAs that start on a
// 32-byte boundary, zero fills from one SE-filled buffer, and output rows
// assembled by a padded indexed gather (source row ids from the scalar
// core, -1 for a row of zeros).
#include <stdint.h>

#include <kevolve/abi.h>
#include <kevolve/mtia.h>

namespace {

int64_t gcd64(int64_t a, int64_t b) { return b ? gcd64(b, a % b) : a; }
int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

// DMA of the int64 array src[s0 .. s1] from the 32-byte boundary at or below
// s0: the scalar core finds src[s0] at element s0 % 4 of the slot.
void load_ints(kv_mtia_device* d, int cb, uint64_t src, int64_t s0, int64_t s1) {
  const int64_t a = s0 - s0 % 4, n = s1 - a + 1;
  kv_mtia_dma_in(d, cb, kv_mtia_rows(src + uint64_t(a) * 8, 1, n * 8, n * 8));
}

// Writes `bytes` zero bytes at dst (32-byte aligned) from cb_zero, a buffer
// of zero_bytes (a multiple of 32) the SE filled once and that stays.
void write_zeros(kv_mtia_device* d, int cb_zero, int64_t zero_bytes, uint64_t dst, int64_t bytes) {
  for (int64_t o = 0; o < bytes; o += zero_bytes) {
    const int64_t n = min64(zero_bytes, bytes - o);
    kv_mtia_dma_out(d, kv_mtia_rows(dst + uint64_t(o), 1, n, n), cb_zero, KV_CB_KEEP);
  }
}

// Output rows assembled by a padded gather: add() collects the source row id
// of each next output row (-1: zeros); every `cap` rows (and at flush) the
// scalar core pushes the ids, the gather fetches the rows and one DMA stores
// them at the next output position. cap and the start position keep every
// store 32-byte aligned.
struct row_builder {
  kv_mtia_device* d;
  int cb_ids, cb_rows;
  uint64_t table, out;
  int64_t table_rows, row_bytes, cap, pos;  // pos: output row of ids[0]
  int64_t n = 0;
  int64_t ids[512];

  void add(int64_t id) {
    ids[n++] = id;
    if (n == cap) flush();
  }
  void flush() {
    if (n == 0) return;
    kv_mtia_sc_push_int(d, cb_ids, KV_I64, ids, int32_t(n));
    kv_mtia_dma_gather(d, cb_rows, table, table_rows, row_bytes, row_bytes, cb_ids, int32_t(n), KV_I64,
                       KV_CB_POP | KV_GATHER_ZERO_NEG);
    kv_mtia_dma_out(d, kv_mtia_rows(out + uint64_t(pos * row_bytes), 1, n * row_bytes, n * row_bytes), cb_rows,
                    KV_CB_POP);
    pos += n;
    n = 0;
  }
};

}  // namespace


namespace {

struct cfg {
  uint64_t values, offsets, out;
  int64_t seqs, len, total, row_bytes, unit, cap, zero_bytes;  // unit: sequences per aligned output step
  int32_t slots, block, contig;
};

void program(kv_mtia_device* d, const void* user) {
  const cfg& c = *static_cast<const cfg*>(user);
  const int64_t units = (c.seqs + c.unit - 1) / c.unit;
  const int64_t pid = kv_mtia_program_id(d), np = kv_mtia_num_programs(d);
  const int64_t s0 = units * pid / np * c.unit, s1 = min64(units * (pid + 1) / np * c.unit, c.seqs);
  if (s0 >= s1) return;
  const int64_t seq_bytes = c.len * c.row_bytes;
  const int cb_zero = kv_mtia_cb_alloc(d, int32_t(c.zero_bytes), 1);
  kv_mtia_se_fill(d, cb_zero, 1, int32_t(c.zero_bytes / 4), KV_F32, 0.0f);
  if (c.total == 0) {  // nothing to copy
    write_zeros(d, cb_zero, c.zero_bytes, c.out + uint64_t(s0 * seq_bytes), (s1 - s0) * seq_bytes);
    return;
  }
  const int cb_off = kv_mtia_cb_alloc(d, (c.block + 4) * 8, KVP_PREFETCH ? 2 : 1);
  const int cb_ids = c.contig ? -1 : kv_mtia_cb_alloc(d, int32_t(c.cap * 8), c.slots);
  const int cb_rows = kv_mtia_cb_alloc(d, int32_t(c.contig ? seq_bytes : c.cap * c.row_bytes), c.slots);
  row_builder rb{d, cb_ids, cb_rows, c.values, c.out, c.total, c.row_bytes, c.cap, s0 * c.len};
  auto end_of = [&](int64_t b) { return min64(b + c.block, s1); };
  if (KVP_PREFETCH) load_ints(d, cb_off, c.offsets, s0, end_of(s0));
  for (int64_t b0 = s0; b0 < s1; b0 = end_of(b0)) {
    const int64_t b1 = end_of(b0);
    if (!KVP_PREFETCH) load_ints(d, cb_off, c.offsets, b0, b1);
    else if (b1 < s1) load_ints(d, cb_off, c.offsets, b1, end_of(b1));  // ahead of this block's copies
    int64_t lo = 0, hi = 0;
    kv_mtia_sc_peek_int(d, cb_off, KV_I64, b0 % 4, KV_CB_KEEP, &lo);
    for (int64_t b = b0; b < b1; ++b, lo = hi) {
      kv_mtia_sc_peek_int(d, cb_off, KV_I64, b0 % 4 + b + 1 - b0, b + 1 == b1 ? KV_CB_POP : KV_CB_KEEP, &hi);
      const int64_t n = min64(hi - lo, c.len);
      const uint64_t dst = c.out + uint64_t(b * seq_bytes);
      if (!c.contig) {
        for (int64_t l = 0; l < c.len; ++l) rb.add(l < n ? lo + l : -1);
        continue;
      }
      if (n > 0) {
        kv_mtia_dma_in(d, cb_rows, kv_mtia_rows(c.values + uint64_t(lo * c.row_bytes), 1, n * c.row_bytes, n * c.row_bytes));
        kv_mtia_dma_out(d, kv_mtia_rows(dst, 1, n * c.row_bytes, n * c.row_bytes), cb_rows, KV_CB_POP);
      }
      write_zeros(d, cb_zero, c.zero_bytes, dst + uint64_t(n * c.row_bytes), (c.len - n) * c.row_bytes);
    }
  }
  rb.flush();
}

}  // namespace

extern "C" int kevolve_kernel(const kv_args* a, kv_mtia_device* dev) {
  cfg c;
  const kv_tensor& values = a->inputs[0];
  const kv_tensor& out = a->outputs[0];
  c.values = kv_mtia_addr(&values);
  c.offsets = kv_mtia_addr(&a->inputs[1]);
  c.out = kv_mtia_addr(&out);
  c.seqs = out.dims[0];
  c.len = out.dims[1];
  c.total = values.dims[0];
  c.row_bytes = out.dims[2] * 4;
  if (c.seqs == 0 || c.len == 0 || c.row_bytes == 0) return 0;
  const int64_t urow = 32 / gcd64(c.row_bytes, 32);  // output rows per aligned step
  c.unit = 32 / gcd64(c.len * c.row_bytes, 32);
  c.contig = KVP_CONTIG && c.row_bytes % 32 == 0 ? 1 : 0;
  c.block = int32_t(KVP_SEQ_BLOCK);
  c.cap = KVP_GATHER_ROWS < urow ? urow : KVP_GATHER_ROWS / urow * urow;
  // Local memory: the zero buffer, the offsets, and per slot one sequence
  // (contig) or one gather (ids and rows).
  const int64_t ls = kv_mtia_query(dev, KV_MTIA_Q_LS_BYTES) - 16384;
  c.zero_bytes = min64((c.len * c.row_bytes + 31) / 32 * 32, 65536);
  const int64_t per_slot = c.contig ? c.len * c.row_bytes : c.cap * (c.row_bytes + 8);
  int64_t slots = KVP_SLOTS;
  while (slots > 1 && slots * per_slot + c.zero_bytes > ls) --slots;
  if (c.contig && per_slot + c.zero_bytes > ls) c.contig = 0;  // a sequence does not fit: gather path
  while (!c.contig && c.cap > urow && slots * c.cap * (c.row_bytes + 8) + c.zero_bytes > ls) c.cap -= urow;
  c.slots = int32_t(slots);
  const int32_t pes = kv_mtia_grid_rows(dev) * kv_mtia_grid_cols(dev);
  return kv_mtia_launch(dev, pes, program, &c);
}
