// knowledge/examples/mtia_emu/sequence_truncate.cpp: an honest mtia_emu kernel of sequence_truncate (kevolve eval --backend mtia_emu).
// knowledge/templates/mtia_emu/sequence_truncate.cpp.tmpl with the parameters below: contiguous copies per sequence, offsets of a program's range kept in local memory, three CB slots.
#define KVP_SLOTS 3
#define KVP_SEQ_BLOCK 256
#define KVP_GATHER_ROWS 64
#define KVP_CONTIG 1
// Keep the last K rows of every sequence (jagged in, jagged out) on the
// MTIA-like emulator. Each program owns a range of sequences:
//  1. it DMAs their offsets, the scalar core peeks them and sums the kept
//     lengths; the counts of all programs meet in the workspace (DMA out,
//     barrier, one strided DMA in), which gives the program its first output
//     row and the total;
//  2. it writes its out_offsets (scalar-core pushes, DMA out) and its rows:
//     KVP_CONTIG = 1 (rows 32-byte multiples): one DMA in of the kept rows and
//     one DMA out per sequence; KVP_CONTIG = 0: padded indexed gathers of
//     KVP_GATHER_ROWS output rows (row ids from the scalar core);
//  3. the zero rows after the last kept row, split over the programs.
// Rows that are not 32-byte multiples cannot start a store at any row: one
// program then does everything (no exchange). The offsets of a range of at
// most KVP_SEQ_BLOCK sequences stay in local memory between steps 1 and 2;
// longer ranges are read twice. KVP_SLOTS CB slots let reads run ahead of
// writes.
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
  uint64_t values, offsets, out_offsets, out, work;
  int64_t seqs, keep, total, row_bytes, cap, zero_bytes, block;
  int32_t slots, contig;
};

void program(kv_mtia_device* d, const void* user) {
  const cfg& c = *static_cast<const cfg*>(user);
  const int64_t pid = kv_mtia_program_id(d), np = kv_mtia_num_programs(d);
  const int64_t units = (c.seqs + 3) / 4;
  const int64_t s0 = min64(units * pid / np * 4, c.seqs), s1 = min64(units * (pid + 1) / np * 4, c.seqs);
  const bool one_block = s1 - s0 <= c.block;
  const int cb_off = kv_mtia_cb_alloc(d, int32_t((c.block + 4) * 8), one_block ? 1 : 2);
  auto end_of = [&](int64_t b) { return min64(b + c.block, s1); };
  // Walks the offsets of [s0, s1) block by block: f(b, lo, hi) per sequence,
  // done(b0, b1) per block. `load`: DMA them (the next block's ahead of this
  // one); `stay`: leave the last block in cb_off for the next walk.
  auto walk = [&](bool load, bool stay, auto&& f, auto&& done) {
    if (s0 >= s1) return;
    if (load) load_ints(d, cb_off, c.offsets, s0, end_of(s0));
    for (int64_t b0 = s0; b0 < s1; b0 = end_of(b0)) {
      const int64_t b1 = end_of(b0);
      if (load && b1 < s1) load_ints(d, cb_off, c.offsets, b1, end_of(b1));
      int64_t lo = 0, hi = 0;
      kv_mtia_sc_peek_int(d, cb_off, KV_I64, b0 % 4, KV_CB_KEEP, &lo);
      for (int64_t b = b0; b < b1; ++b, lo = hi) {
        const bool pop = b + 1 == b1 && !stay;
        kv_mtia_sc_peek_int(d, cb_off, KV_I64, b0 % 4 + b + 1 - b0, pop ? KV_CB_POP : KV_CB_KEEP, &hi);
        f(b, lo, hi);
      }
      done(b0, b1);
    }
  };
  // 1. kept rows of this program, then of all programs before it
  int64_t mine = 0, base = 0, kept = 0;
  walk(true, one_block, [&](int64_t, int64_t lo, int64_t hi) { mine += min64(hi - lo, c.keep); },
       [](int64_t, int64_t) {});
  if (np > 1) {
    const int cb_cnt = kv_mtia_cb_alloc(d, 8, 1), cb_all = kv_mtia_cb_alloc(d, int32_t(np * 8), 1);
    kv_mtia_sc_push_int(d, cb_cnt, KV_I64, &mine, 1);
    kv_mtia_dma_out(d, kv_mtia_rows(c.work + uint64_t(pid * 32), 1, 8, 8), cb_cnt, KV_CB_POP);
    kv_mtia_barrier(d);
    kv_mtia_dma_in(d, cb_all, kv_mtia_rows(c.work, np, 8, 32));
    for (int64_t q = 0; q < np; ++q) {
      int64_t v = 0;
      kv_mtia_sc_peek_int(d, cb_all, KV_I64, q, q + 1 == np ? KV_CB_POP : KV_CB_KEEP, &v);
      if (q < pid) base += v;
      kept += v;
    }
  } else {
    kept = mine;
  }
  // 2. out_offsets and the kept rows
  const int cb_oo = kv_mtia_cb_alloc(d, int32_t((c.block + 1) * 8), 2);
  const int cb_zero = kv_mtia_cb_alloc(d, int32_t(c.zero_bytes), 1);
  kv_mtia_se_fill(d, cb_zero, 1, int32_t(c.zero_bytes / 4), KV_F32, 0.0f);
  const int cb_ids = c.contig ? -1 : kv_mtia_cb_alloc(d, int32_t(c.cap * 8), c.slots);
  const int cb_rows = kv_mtia_cb_alloc(d, int32_t(c.contig ? (c.keep > 0 ? c.keep : 1) * c.row_bytes : c.cap * c.row_bytes),
                                       c.slots);
  row_builder rb{d, cb_ids, cb_rows, c.values, c.out, c.total, c.row_bytes, c.cap, base};
  int64_t pos = base, oo[KVP_SEQ_BLOCK + 1];  // out_offsets of the block
  walk(!one_block, false,
       [&](int64_t b, int64_t lo, int64_t hi) {
         const int64_t n = min64(hi - lo, c.keep), bytes = n * c.row_bytes;
         oo[(b - s0) % c.block] = pos;  // blocks start at s0 + k * block
         if (c.contig && n > 0) {
           kv_mtia_dma_in(d, cb_rows, kv_mtia_rows(c.values + uint64_t((hi - n) * c.row_bytes), 1, bytes, bytes));
           kv_mtia_dma_out(d, kv_mtia_rows(c.out + uint64_t(pos * c.row_bytes), 1, bytes, bytes), cb_rows, KV_CB_POP);
         }
         for (int64_t r = 0; !c.contig && r < n; ++r) rb.add(hi - n + r);
         pos += n;
       },
       [&](int64_t b0, int64_t b1) {  // the last program also writes out_offsets[seqs]
         const int64_t n = b1 - b0 + (b1 == c.seqs ? 1 : 0);
         oo[b1 - b0] = pos;
         kv_mtia_sc_push_int(d, cb_oo, KV_I64, oo, int32_t(n));
         kv_mtia_dma_out(d, kv_mtia_rows(c.out_offsets + uint64_t(b0) * 8, 1, n * 8, n * 8), cb_oo, KV_CB_POP);
       });
  if (c.seqs == 0 && pid == 0) {  // out_offsets = {0}
    kv_mtia_sc_push_int(d, cb_oo, KV_I64, &pos, 1);
    kv_mtia_dma_out(d, kv_mtia_rows(c.out_offsets, 1, 8, 8), cb_oo, KV_CB_POP);
  }
  // 3. zero rows [kept, seqs * keep): here the share of this program; one
  // program pads its gathered rows up to an aligned row first.
  const int64_t rows = c.seqs * c.keep;
  int64_t z0 = kept + (rows - kept) * pid / np, z1 = kept + (rows - kept) * (pid + 1) / np;
  if (!c.contig) {
    const int64_t unit = 32 / gcd64(c.row_bytes, 32);
    while (rb.pos + rb.n < z1 && (rb.pos + rb.n) % unit != 0) rb.add(-1);
    rb.flush();
    z0 = rb.pos > z0 ? rb.pos : z0;
  }
  if (z1 > z0) write_zeros(d, cb_zero, c.zero_bytes, c.out + uint64_t(z0 * c.row_bytes), (z1 - z0) * c.row_bytes);
}

}  // namespace

extern "C" int kevolve_kernel(const kv_args* a, kv_mtia_device* dev) {
  cfg c;
  const kv_tensor& values = a->inputs[0];
  c.values = kv_mtia_addr(&values);
  c.offsets = kv_mtia_addr(&a->inputs[1]);
  c.out_offsets = kv_mtia_addr(&a->outputs[0]);
  c.out = kv_mtia_addr(&a->outputs[1]);
  c.work = uint64_t(uintptr_t(a->workspace));
  c.seqs = a->outputs[0].dims[0] - 1;
  c.total = values.dims[0];
  c.row_bytes = values.dims[1] * 4;
  c.keep = c.seqs > 0 ? a->outputs[1].dims[0] / c.seqs : 0;
  const int32_t pes = kv_mtia_grid_rows(dev) * kv_mtia_grid_cols(dev);
  const bool aligned = c.row_bytes % 32 == 0;
  // one program when rows are not 32-byte multiples (or no workspace for the exchange)
  const int32_t programs = aligned && a->workspace_bytes >= int64_t(pes) * 32 ? pes : 1;
  const int64_t urow = 32 / gcd64(c.row_bytes, 32);
  c.contig = KVP_CONTIG && aligned ? 1 : 0;
  c.block = KVP_SEQ_BLOCK;
  c.cap = KVP_GATHER_ROWS < urow ? urow : KVP_GATHER_ROWS / urow * urow;
  const int64_t ls = kv_mtia_query(dev, KV_MTIA_Q_LS_BYTES) - 16384 - 4 * (c.block + 4) * 8 - programs * 8;
  c.zero_bytes = 32768;
  const int64_t per_slot = c.contig ? c.keep * c.row_bytes : c.cap * (c.row_bytes + 8);
  int64_t slots = KVP_SLOTS;
  while (slots > 1 && slots * per_slot + c.zero_bytes > ls) --slots;
  if (c.contig && per_slot + c.zero_bytes > ls) c.contig = 0;  // K rows do not fit: gather path
  while (!c.contig && c.cap > urow && slots * c.cap * (c.row_bytes + 8) + c.zero_bytes > ls) c.cap -= urow;
  c.slots = int32_t(slots);
  if (c.row_bytes == 0) return 0;
  return kv_mtia_launch(dev, programs, program, &c);
}
