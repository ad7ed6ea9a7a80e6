// knowledge/examples/mtia_emu/embedding_bag_sum.cpp: an honest mtia_emu kernel of embedding_bag_sum (kevolve eval --backend mtia_emu).
// knowledge/templates/mtia_emu/embedding_bag_sum.cpp.tmpl with the parameters below: indices and offsets fetched ahead, bags split by rows, four CB slots.
#define KVP_SLOTS 4
#define KVP_BAG_BLOCK 16
#define KVP_GATHER_ROWS 64
#define KVP_BALANCE 1
#define KVP_IDX_AHEAD 1
#define KVP_PREFETCH 1
// Sum-pooled embedding bags on the MTIA-like emulator: out[b] = sum of the
// table rows indices[offsets[b] .. offsets[b+1]) (fp32 accumulation).
// Each program owns a range of bags (cut so that every DMA is 32-byte
// aligned) and walks it in blocks of KVP_BAG_BLOCK bags:
//   DMA offsets[c0..c1] -> the scalar core peeks the block's index range and
//   pushes the bag boundaries for the RE -> per run of at most
//   KVP_GATHER_ROWS indices: DMA the indices, indexed-gather DMA of the table
//   rows, RE segmented row-accumulate into one fp32 accumulator row per bag
//   -> RE drain (rounding to T once) -> DMA out.
// KVP_PREFETCH DMAs the offsets of the next block before the current block's
// gathers, so the scalar core's peeks do not wait behind them; KVP_SLOTS CB
// slots per stage overlap the index DMA, the gather, the RE and the store.
#include <stdint.h>

#include <kevolve/abi.h>
#include <kevolve/mtia.h>

namespace {

constexpr int64_t max_block = 256;
constexpr int64_t window = 64;  // KVP_BALANCE: bags searched on each side of the even split

struct block {
  int64_t c0, c1, start, p1;
  int64_t bound[max_block + 1];
};

struct cfg {
  uint64_t table, indices, offsets, out;
  int64_t rows_e, dim, bags, nnz, row_bytes, unit;  // unit: bags per aligned output step
  int32_t dtype, slots, block, gather_rows;
};

// DMA of offsets[s0 .. s1] from the 32-byte boundary at or below s0: the
// scalar core finds offsets[s0] at element s0 % 4 of the slot.
void load_offsets(kv_mtia_device* d, const cfg& c, int cb, int64_t s0, int64_t s1) {
  const int64_t a = s0 - s0 % 4, n = s1 - a + 1;
  kv_mtia_dma_in(d, cb, kv_mtia_rows(c.offsets + uint64_t(a) * 8, 1, n * 8, n * 8));
}

#if KVP_BALANCE
// Index of the one of n non-decreasing int64 (from element `at` of cb's
// front slot) nearest to target, by binary search with scalar peeks.
int64_t nearest_peek(kv_mtia_device* d, int cb, int64_t at, int64_t n, int64_t target) {
  int64_t lo = 0, hi = n, v = 0, below = 0;
  while (lo < hi) {
    const int64_t mid = (lo + hi) / 2;
    kv_mtia_sc_peek_int(d, cb, KV_I64, at + mid, KV_CB_KEEP, &v);
    if (v < target) lo = mid + 1;
    else hi = mid;
  }
  if (lo == 0) return 0;
  if (lo == n) return n - 1;
  kv_mtia_sc_peek_int(d, cb, KV_I64, at + lo, KV_CB_KEEP, &v);
  kv_mtia_sc_peek_int(d, cb, KV_I64, at + lo - 1, KV_CB_KEEP, &below);
  return target - below < v - target ? lo - 1 : lo;
}
#endif

void program(kv_mtia_device* d, const void* user) {
  const cfg& c = *static_cast<const cfg*>(user);
  const int64_t pid = kv_mtia_program_id(d), np = kv_mtia_num_programs(d);
  const int64_t units = (c.bags + c.unit - 1) / c.unit;
  int64_t b0 = units * pid / np * c.unit, b1 = units * (pid + 1) / np * c.unit;
  if (b1 > c.bags) b1 = c.bags;
  const int64_t meta = (c.block > 2 * window ? c.block : 2 * window) + 4;  // offsets per slot
  const int cb_off = kv_mtia_cb_alloc(d, int32_t(meta * 8), KVP_PREFETCH ? 2 : 1);
  auto end_of = [&](int64_t c0) { return c0 + c.block < b1 ? c0 + c.block : b1; };
  int64_t e0 = -1, at0 = 0;  // the first block [b0, e0): offsets[b0] at element at0 of cb_off's front slot
#if KVP_BALANCE
  // Split the indices (not the bags) evenly: the offsets in a window around
  // each even split by bags are searched for the even split by indices. The
  // window around b0 (in cb_off) serves the first block.
  {
    const int cb_w = kv_mtia_cb_alloc(d, int32_t(meta * 8), 1);
    int64_t lo[2], hi[2], v = 0;
    for (int e = 0; e < 2; ++e) {
      const int64_t mid = e ? b1 : b0;
      lo[e] = mid - window < 0 ? 0 : mid - window;
      hi[e] = mid + window < c.bags ? mid + window : c.bags;
      load_offsets(d, c, e ? cb_w : cb_off, lo[e], hi[e]);
    }
    if (pid + 1 < np) {
      b1 = lo[1] + nearest_peek(d, cb_w, lo[1] % 4, hi[1] - lo[1] + 1, c.nnz * (pid + 1) / np);
      b1 -= b1 % c.unit;
    }
    kv_mtia_sc_peek_int(d, cb_w, KV_I64, 0, KV_CB_POP, &v);
    if (pid > 0) {
      b0 = lo[0] + nearest_peek(d, cb_off, lo[0] % 4, hi[0] - lo[0] + 1, c.nnz * pid / np);
      b0 -= b0 % c.unit;
    }
    const int64_t reach = hi[0] - hi[0] % c.unit;  // the window's offsets end here
    if (b0 < b1 && reach > b0) {
      e0 = end_of(b0) < reach ? end_of(b0) : reach;
      at0 = b0 - (lo[0] - lo[0] % 4);
    } else {
      kv_mtia_sc_peek_int(d, cb_off, KV_I64, 0, KV_CB_POP, &v);
    }
  }
#endif
  if (b0 >= b1) return;
  if (e0 < 0) {
    e0 = end_of(b0);
    at0 = b0 % 4;
    load_offsets(d, c, cb_off, b0, e0);
  }
  const int cb_seg = kv_mtia_cb_alloc(d, int32_t((c.block + 1) * 8), 2);
  const int cb_idx = kv_mtia_cb_alloc(d, c.gather_rows * 8, c.slots + KVP_IDX_AHEAD);
  const int cb_rows = kv_mtia_cb_alloc(d, int32_t(c.gather_rows * c.row_bytes), c.slots);
  const int cb_out = kv_mtia_cb_alloc(d, int32_t(c.block * c.row_bytes), c.slots);
  const int cb_zero = kv_mtia_cb_alloc(d, int32_t(c.block * c.row_bytes), 1);
  const int acc = kv_mtia_acc_alloc(d, c.block, int32_t(c.dim));
  kv_mtia_se_fill(d, cb_zero, c.block, int32_t(c.dim), c.dtype, 0.0f);  // rows of empty blocks
  auto load_idx = [&](int64_t q, int64_t p1) {
    const int64_t n = p1 - q < c.gather_rows ? p1 - q : c.gather_rows;
    kv_mtia_dma_in(d, cb_idx, kv_mtia_rows(c.indices + uint64_t(q) * 8, 1, n * 8, n * 8));
  };
  // A block of bags: its offsets (peeked by the scalar core: the ends first,
  // so the first index DMA goes out early) and the run of indices it
  // gathers. Index DMAs start on a 32-byte boundary: up to 3 leading indices
  // belong to the previous block; their rows fall outside every segment.
  block blk[2];
  auto open = [&](block& k, int64_t c0, int64_t c1, int64_t at) {
    k.c0 = c0;
    k.c1 = c1;
    if (!KVP_PREFETCH && c0 != b0) load_offsets(d, c, cb_off, c0, c1);
    if (KVP_PREFETCH && c1 < b1) load_offsets(d, c, cb_off, c1, end_of(c1));  // ahead of this block's gathers
    const int64_t n_bags = c1 - c0;
    kv_mtia_sc_peek_int(d, cb_off, KV_I64, at, KV_CB_KEEP, &k.bound[0]);
    kv_mtia_sc_peek_int(d, cb_off, KV_I64, at + n_bags, KV_CB_KEEP, &k.bound[n_bags]);
    k.start = k.bound[0] - k.bound[0] % 4;
    k.p1 = k.bound[n_bags];
    const bool rows = k.p1 > k.bound[0];
    if (KVP_IDX_AHEAD && rows) load_idx(k.start, k.p1);
    for (int64_t i = 1; i < n_bags; ++i) kv_mtia_sc_peek_int(d, cb_off, KV_I64, at + i, KV_CB_KEEP, &k.bound[i]);
    kv_mtia_sc_peek_int(d, cb_off, KV_I64, at, KV_CB_POP, &k.bound[0]);
    if (rows) kv_mtia_sc_push_int(d, cb_seg, KV_I64, k.bound, int32_t(n_bags + 1));
  };
  int cur = 0;
  open(blk[cur], b0, e0, at0);
  for (;;) {
    block& k = blk[cur];
    const int64_t n_bags = k.c1 - k.c0;
    const bool has_next = k.c1 < b1;
    bool opened = false;
    const kv_mtia_view dst = kv_mtia_rows(c.out + uint64_t(k.c0 * c.row_bytes), 1, n_bags * c.row_bytes, n_bags * c.row_bytes);
    if (k.p1 <= k.bound[0]) {  // every bag of the block is empty
      kv_mtia_dma_out(d, dst, cb_zero, KV_CB_KEEP);
    } else {
      kv_mtia_segments seg = {cb_seg, KV_CB_KEEP, KV_I64, 0, int32_t(n_bags)};
      for (int64_t q = k.start; q < k.p1; q += c.gather_rows) {
        const int64_t n = k.p1 - q < c.gather_rows ? k.p1 - q : c.gather_rows;
        const bool last = q + c.gather_rows >= k.p1;
        // KVP_IDX_AHEAD: the next run's indices arrive while this run is gathered
        if (!KVP_IDX_AHEAD) load_idx(q, k.p1);
        else if (!last) load_idx(q + c.gather_rows, k.p1);
        else if (has_next) open(blk[1 - cur], k.c1, end_of(k.c1), k.c1 % 4), opened = true;
        kv_mtia_dma_gather(d, cb_rows, c.table, c.rows_e, c.row_bytes, c.row_bytes, cb_idx, int32_t(n), KV_I64, KV_CB_POP);
        if (last) seg.flags = KV_CB_POP;
        kv_mtia_re_segment_sum(d, cb_rows, KV_CB_POP, int32_t(n), int32_t(c.dim), c.dtype, q, &seg, acc,
                               q == k.start ? KV_MM_ZERO : 0u);
      }
      kv_mtia_re_drain(d, acc, cb_out, c.dtype, KV_OP_COPY, -1, 0);
      kv_mtia_dma_out(d, dst, cb_out, KV_CB_POP);
    }
    if (!has_next) break;
    if (!opened) open(blk[1 - cur], k.c1, end_of(k.c1), k.c1 % 4);
    cur = 1 - cur;
  }
}

int64_t gcd64(int64_t a, int64_t b) { return b ? gcd64(b, a % b) : a; }

}  // namespace

extern "C" int kevolve_kernel(const kv_args* a, kv_mtia_device* dev) {
  cfg c;
  const kv_tensor& table = a->inputs[0];
  c.table = kv_mtia_addr(&table);
  c.indices = kv_mtia_addr(&a->inputs[1]);
  c.offsets = kv_mtia_addr(&a->inputs[2]);
  c.out = kv_mtia_addr(&a->outputs[0]);
  c.dtype = table.dtype;
  c.rows_e = table.dims[0];
  c.dim = table.dims[1];
  c.bags = a->outputs[0].dims[0];
  c.nnz = a->inputs[1].dims[0];
  c.row_bytes = c.dim * (c.dtype == KV_F32 ? 4 : 2);
  // Bag steps keep the output rows 32-byte aligned.
  c.unit = 32 / gcd64(c.row_bytes, 32);
  int64_t block = KVP_BAG_BLOCK > max_block ? max_block : KVP_BAG_BLOCK;
  // fp32 accumulators of one block within the RE
  while (block > c.unit && block * c.dim * 4 > 131072) block /= 2;
  if (block < c.unit) block = c.unit;
  c.block = int32_t(block);
  int64_t rows = KVP_GATHER_ROWS;
  // At most a sixteenth of a program's share of the indices per run, so the
  // last runs (gather, RE, store after every other program finished) are short.
  const int32_t pes = kv_mtia_grid_rows(dev) * kv_mtia_grid_cols(dev);
  const int64_t share = (c.nnz / pes / 16 + 3) / 4 * 4;
  if (rows > share) rows = share < 16 ? 16 : share;
  // Local memory: indices and gathered rows per slot, out and zero blocks, metadata.
  const int64_t budget = kv_mtia_query(dev, KV_MTIA_Q_LS_BYTES) - 16384 - (KVP_SLOTS + 1) * block * c.row_bytes -
                         4 * (block + 2 * window + 8) * 8;
  int64_t slots = KVP_SLOTS;
  // (runs stay multiples of 4 indices: every index DMA starts 32-byte aligned)
  while (rows > 16 && slots * rows * (c.row_bytes + 8) > budget) rows = rows / 8 * 4;
  while (slots > 1 && slots * rows * (c.row_bytes + 8) > budget) --slots;
  while (rows > 4 && slots * rows * (c.row_bytes + 8) > budget) rows = rows / 8 * 4;
  c.gather_rows = int32_t(rows);
  c.slots = int32_t(slots);
  if (c.bags == 0 || c.dim == 0) return 0;
  return kv_mtia_launch(dev, pes, program, &c);
}
