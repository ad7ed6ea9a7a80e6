// The mtia_emu baseline of embedding_bag_sum: what a compiler would emit without double buffering (one CB slot per stage, offsets and indices DMA'd right before they are read, bags split evenly by count, 4 bags per block, 32-row gathers).
// Generated from knowledge/templates/mtia_emu/embedding_bag_sum.cpp.tmpl with the parameters below.
#define KVP_SLOTS 1
#define KVP_BAG_BLOCK 4
#define KVP_GATHER_ROWS 32
#define KVP_BALANCE 0
#define KVP_IDX_AHEAD 0
#define KVP_SPLIT 0
#define KVP_PREFETCH 0
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
constexpr int64_t taper_bytes = 4096;  // KVP_SPLIT: the shortest of the halving last runs

struct block {
  int64_t c0, c1, start, p1;
  int64_t bound[max_block + 1];
};

struct cfg {
  uint64_t table, indices, offsets, out;
  int64_t rows_e, dim, bags, nnz, row_bytes, unit;  // unit: bags per aligned output step
  int32_t dtype, slots, block, gather_rows;
  int64_t tail_bags;  // bags of a program's last block (2+ slots: a quarter block)
  bool split;         // KVP_SPLIT: every program gathers the same number of rows
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

#if KVP_SPLIT
// Split points (KVP_SPLIT): program j of the snake order over the PE grid
// starts at row u = NNZ * j / P; the bag that row falls in is cut there, its
// head summed by program j and sent over the reduction network to program
// j - 1 (a neighbour in the snake), which owns the bag. Bags owned by j are
// those that start in [u_j, u_j+1). The bag of row u is searched among the
// offsets of bags B * j / P +- window; where it lies outside, the split
// moves to that window's edge (a bag boundary: nothing is cut). Both
// programs next to a split compute it from the same offsets.
struct split_point {
  int64_t u;         // first row of the program after the split
  int64_t first;     // first bag that starts at or after u
  int64_t off_first; // offsets[first]: > u when a bag is cut at u
  int64_t off_prev;  // offsets[first - 1] when a bag is cut
};

// The window of offsets around split j: [*lo, *hi].
void split_window(const cfg& c, int64_t j, int64_t np, int64_t* lo, int64_t* hi) {
  const int64_t mid = c.bags * j / np;
  *lo = mid - window < 0 ? 0 : mid - window;
  *hi = mid + window < c.bags ? mid + window : c.bags;
}

// Where the slot of split j's window starts (load_offsets' first element).
int64_t lo_first(const cfg& c, int64_t j, int64_t np) {
  int64_t lo = 0, hi = 0;
  split_window(c, j, np, &lo, &hi);
  return lo - lo % 4;
}

// Split j from its window of offsets in cb's front slot, which holds
// offsets[first ..] (first: a multiple of 4); `pop` frees the slot after.
split_point find_split(kv_mtia_device* d, const cfg& c, int cb, int64_t first, bool pop, int64_t j, int64_t np) {
  const int64_t target = c.nnz * j / np;
  int64_t lo = 0, hi = 0;
  split_window(c, j, np, &lo, &hi);
  const int64_t at = lo - first, n = hi - lo + 1;
  int64_t a = 0, b = n, v = 0;  // lower bound of target among offsets[lo..hi]
  while (a < b) {
    const int64_t m = (a + b) / 2;
    kv_mtia_sc_peek_int(d, cb, KV_I64, at + m, KV_CB_KEEP, &v);
    if (v < target) a = m + 1;
    else b = m;
  }
  split_point s;
  s.off_prev = -1;
  if (a == n || (a == 0 && lo > 0)) {  // outside the window: split at its edge
    s.first = a == n ? hi : lo;
    kv_mtia_sc_peek_int(d, cb, KV_I64, at + (s.first - lo), KV_CB_KEEP, &s.off_first);
    s.u = s.off_first;
  } else {
    s.first = lo + a;
    s.u = target;
    kv_mtia_sc_peek_int(d, cb, KV_I64, at + a, KV_CB_KEEP, &s.off_first);
    if (s.off_first > target) kv_mtia_sc_peek_int(d, cb, KV_I64, at + a - 1, KV_CB_KEEP, &s.off_prev);
  }
  if (pop) kv_mtia_sc_peek_int(d, cb, KV_I64, at, KV_CB_POP, &v);
  return s;
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
  // Blocks of c.block bags; the last one c.tail_bags (the block before it takes
  // the rest), so little is left to reduce, drain and store after the last gather.
  auto end_of = [&](int64_t c0) {
    const int64_t left = b1 - c0;
    if (left > c.block + c.tail_bags) return c0 + c.block;
    if (left <= c.tail_bags || c.tail_bags >= c.block) return c0 + c.block < b1 ? c0 + c.block : b1;
    const int64_t e = c0 + (left - c.tail_bags) / c.unit * c.unit;
    return e > c0 ? e : b1;
  };
  int64_t e0 = -1, at0 = 0;  // the first block [b0, e0): offsets[b0] at element at0 of cb_off's front slot
  const int cb_seg = kv_mtia_cb_alloc(d, int32_t((c.block + 1) * 8), 3);
  // KVP_IDX_AHEAD: the stream (split) loads indices two runs ahead, the blocks one
  const int cb_idx = kv_mtia_cb_alloc(d, c.gather_rows * 8, c.slots + (c.split ? 2 : 1) * KVP_IDX_AHEAD);
  const int cb_rows = kv_mtia_cb_alloc(d, int32_t(c.gather_rows * c.row_bytes), c.slots);
  const int cb_out = kv_mtia_cb_alloc(d, int32_t(c.block * c.row_bytes), c.slots);
  const int cb_zero = kv_mtia_cb_alloc(d, int32_t(c.block * c.row_bytes), 1);
  const int acc = kv_mtia_acc_alloc(d, c.block, int32_t(c.dim));
  const int acc_tail = c.tail_bags < c.block ? kv_mtia_acc_alloc(d, int32_t(c.tail_bags), int32_t(c.dim)) : acc;
  kv_mtia_se_fill(d, cb_zero, c.block, int32_t(c.dim), c.dtype, 0.0f);  // rows of empty blocks
  auto load_idx = [&](int64_t q, int64_t p1) {
    const int64_t n = p1 - q < c.gather_rows ? p1 - q : c.gather_rows;
    kv_mtia_dma_in(d, cb_idx, kv_mtia_rows(c.indices + uint64_t(q) * 8, 1, n * 8, n * 8));
  };
#if KVP_SPLIT
  // Rows [u0, u1); the head [u0, h1) belongs to the bag before b0; with
  // `cont` the last bag's rows continue in the next program, which sends
  // their sum.
  int64_t u0 = 0, u1 = 0, h1 = 0, last_start = 0;
  bool cont = false;
  // whole: the offsets from this split's window to the next one's in one
  // slot (cb_union, from offsets[union_first]); the program's rows then go as
  // one stream of runs (stream below), the first spec_runs of them gathered
  // speculatively, [spec_q, spec_r1), before the split is known.
  bool whole = false, spec_fits = false, use_spec = false;
  int cb_union = -1;
  int64_t union_first = 0, spec_q = 0, spec_r1 = 0;
  int64_t spec_held = 0;  // the last speculative run [spec_held, spec_r1) is gathered later, if spec_held < spec_r1
  auto gather_run = [&](int64_t q, int64_t r1) {
    kv_mtia_dma_gather(d, cb_rows, c.table, c.rows_e, c.row_bytes, c.row_bytes, cb_idx, int32_t(r1 - q), KV_I64,
                       KV_CB_POP);
  };
  const int64_t spec_runs = c.slots > 1 && KVP_IDX_AHEAD ? (c.slots < 3 ? c.slots : 3) : 0;
  int to_prev = 0, from_next = 0;
  if (c.split) {
    const int64_t cols = kv_mtia_grid_cols(d), row = pid / cols, col = pid % cols;
    const int64_t q = row * cols + (row % 2 ? cols - 1 - col : col);  // snake order
    to_prev = q % cols == 0 ? KV_DIR_NORTH : row % 2 ? KV_DIR_EAST : KV_DIR_WEST;
    from_next = (q + 1) % cols == 0 ? KV_DIR_SOUTH : row % 2 ? KV_DIR_WEST : KV_DIR_EAST;
    split_point lo_s = {0, 0, 0, -1}, hi_s = {c.nnz, c.bags, c.nnz, -1};
    // One DMA of the offsets from the window of this program's split to the
    // window of the next one's, when they fit a slot (whole): both splits and
    // every group of bags are read from it. Else one slot per window.
    int64_t ulo = 0, uhi = c.bags, w_lo = 0, w_hi = 0;
    if (q > 0) split_window(c, q, np, &ulo, &w_hi);
    if (q + 1 < np) split_window(c, q + 1, np, &w_lo, &uhi);
    whole = uhi - ulo + 8 <= 1024;
    if (whole) {
      union_first = ulo - ulo % 4;
      cb_union = kv_mtia_cb_alloc(d, int32_t((uhi - ulo + 8) * 8), 1);
      // The first runs from the even split of the rows go out before the
      // offsets are read (speculation: they are this program's unless its
      // split moved to a window's edge). The first run's indices go before
      // the offsets, so its gather's request latency starts first.
      spec_q = c.nnz * q / np;
      spec_q -= spec_q % 4;
      const int64_t t1 = c.nnz * (q + 1) / np;
      spec_r1 = spec_q + spec_runs * c.gather_rows < t1 ? spec_q + spec_runs * c.gather_rows : t1;
      if (spec_r1 <= c.nnz * q / np) spec_r1 = spec_q;  // no rows: no speculation
      if (spec_r1 > spec_q) load_idx(spec_q, spec_r1);
      load_offsets(d, c, cb_union, ulo, uhi);
      for (int64_t r = spec_q + c.gather_rows; r < spec_r1; r += c.gather_rows) load_idx(r, spec_r1);
      // The last of two or more waits until the split is known: the first
      // stream run's indices go ahead of it (they would otherwise queue
      // behind every speculative gather, and its gather behind them).
      spec_held = spec_r1;
      for (int64_t r = spec_q; r < spec_r1; r += c.gather_rows) {
        if (KVP_IDX_AHEAD && r > spec_q && r + c.gather_rows >= spec_r1) {
          spec_held = r;
          break;
        }
        gather_run(r, r + c.gather_rows < spec_r1 ? r + c.gather_rows : spec_r1);
      }
      if (q > 0) lo_s = find_split(d, c, cb_union, union_first, false, q, np);
      if (q + 1 < np) hi_s = find_split(d, c, cb_union, union_first, false, q + 1, np);
    } else {
      const int cb_s = kv_mtia_cb_alloc(d, int32_t((2 * window + 8) * 8), 2);
      for (int64_t j = q; j <= q + 1; ++j) {  // both windows in flight at once
        int64_t lo = 0, hi = 0;
        split_window(c, j, np, &lo, &hi);
        if (j > 0 && j < np) load_offsets(d, c, cb_s, lo, hi);
      }
      if (q > 0) lo_s = find_split(d, c, cb_s, lo_first(c, q, np), true, q, np);
      if (q + 1 < np) hi_s = find_split(d, c, cb_s, lo_first(c, q + 1, np), true, q + 1, np);
    }
    u0 = lo_s.u;
    u1 = hi_s.u;
    b0 = lo_s.first;
    b1 = hi_s.first;
    h1 = lo_s.off_first < u1 ? lo_s.off_first : u1;
    cont = hi_s.off_first > u1;
    last_start = hi_s.off_prev;
    if (cont && b0 < b1) --b1;  // the last bag is summed on its own (its own accumulator)
    // The speculative runs are this program's first when its split did not
    // move and they end at its end or 4-aligned (the next run's index DMA).
    spec_fits = u0 == c.nnz * q / np && (spec_r1 == u1 || (spec_r1 < u1 && spec_r1 % 4 == 0));
  }

  if (!c.split) {
#else
  {
#endif
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
  }
#if KVP_SPLIT
  // Rows [r0, r1) summed into the one-row accumulator a (one segment).
  const int cb_one = c.split ? kv_mtia_cb_alloc(d, 16, 2) : -1;
  auto sum_rows = [&](int64_t r0, int64_t r1, int a) {
    const int64_t bounds[2] = {r0, r1};
    kv_mtia_sc_push_int(d, cb_one, KV_I64, bounds, 2);
    kv_mtia_segments seg = {cb_one, KV_CB_KEEP, KV_I64, 0, 1};
    for (int64_t q = r0 - r0 % 4; q < r1; q += c.gather_rows) {
      const int64_t n = r1 - q < c.gather_rows ? r1 - q : c.gather_rows;
      if (q + c.gather_rows >= r1) seg.flags = KV_CB_POP;
      load_idx(q, r1);
      kv_mtia_dma_gather(d, cb_rows, c.table, c.rows_e, c.row_bytes, c.row_bytes, cb_idx, int32_t(n), KV_I64, KV_CB_POP);
      kv_mtia_re_segment_sum(d, cb_rows, KV_CB_POP, int32_t(n), int32_t(c.dim), c.dtype, q, &seg, a,
                             q <= r0 - r0 % 4 ? KV_MM_ZERO : 0u);
    }
  };
  int acc_t = -1, acc_h = -1;
  if (c.split) {
    // The head first, so that its sum leaves early; a program whose rows all
    // belong to one bag passes the next program's sum on with its own.
    acc_h = kv_mtia_acc_alloc(d, 1, int32_t(c.dim));
    acc_t = kv_mtia_acc_alloc(d, 1, int32_t(c.dim));
    const bool owns = b0 < b1 || (cont && last_start >= u0);
    use_spec = spec_r1 > spec_q && spec_fits && owns;
    if (spec_r1 > spec_q && !use_spec) {  // not this program's rows after all: read and drop them
      const int64_t none[2] = {0, 0};
      if (spec_held < spec_r1) gather_run(spec_held, spec_r1);
      for (int64_t r = spec_q; r < spec_r1; r += c.gather_rows) {
        kv_mtia_sc_push_int(d, cb_one, KV_I64, none, 2);
        kv_mtia_segments empty = {cb_one, KV_CB_POP, KV_I64, 0, 1};
        kv_mtia_re_segment_sum(d, cb_rows, KV_CB_POP, int32_t(spec_r1 - r < c.gather_rows ? spec_r1 - r : c.gather_rows),
                               int32_t(c.dim), c.dtype, r, &empty, acc_h, KV_MM_ZERO);
      }
    }
    if (!owns || !whole) {
      if (h1 > u0) sum_rows(u0, h1, acc_h);
      if (!owns && cont) kv_mtia_re_recv(d, acc_h, from_next, h1 > u0 ? 1 : 0);
      if (h1 > u0 || (!owns && cont)) kv_mtia_re_send(d, acc_h, to_prev);
      if (!owns) {
        int64_t v = 0;
        if (whole) kv_mtia_sc_peek_int(d, cb_union, KV_I64, 0, KV_CB_POP, &v);
        return;
      }
    }
  }
  // The owned bag whose rows continue in the next program: summed here, the
  // next program's part added, drained and stored.
  auto last_bag = [&]() {
    if (!c.split || !cont) return;
    const int cb_row = kv_mtia_cb_alloc(d, int32_t(c.row_bytes), 1);
    sum_rows(last_start, u1, acc_t);
    kv_mtia_re_recv(d, acc_t, from_next, 1);
    kv_mtia_re_drain(d, acc_t, cb_row, c.dtype, KV_OP_COPY, -1, 0);
    kv_mtia_dma_out(d, kv_mtia_rows(c.out + uint64_t(b1 * c.row_bytes), 1, c.row_bytes, c.row_bytes), cb_row, KV_CB_POP);
  };
  // Split programs whose offsets fit in one slot: the rows [u0, u1) in one
  // stream of full runs, each run summed into every group its rows reach (the
  // head, blocks of bags, the continued last bag), so no gather is cut short
  // at a block's end and no block waits for its own offsets and indices.
  auto stream = [&](int cb_all) {
    const int64_t base = union_first;  // cb_all holds offsets[base ..]
    if (u0 >= u1) {  // no rows (split points at one offset): empty bags only
      int64_t v = 0;
      for (int64_t c0 = b0; c0 < b1;) {
        const int64_t c1 = end_of(c0), n = c1 - c0;
        kv_mtia_dma_out(d, kv_mtia_rows(c.out + uint64_t(c0 * c.row_bytes), 1, n * c.row_bytes, n * c.row_bytes), cb_zero,
                        KV_CB_KEEP);
        c0 = c1;
      }
      kv_mtia_sc_peek_int(d, cb_all, KV_I64, 0, KV_CB_POP, &v);
      return;
    }
    int64_t bound[max_block + 1];
    int kind = h1 > u0 ? 0 : b0 < b1 ? 1 : 2;  // head, block, last bag; 3: done
    int64_t gc0 = b0, gc1 = b0, gr0 = 0, gr1 = 0;
    int ga = acc;
    bool started = false;
    kv_mtia_segments seg = {cb_seg, KV_CB_KEEP, KV_I64, 0, 1};
    auto setup = [&]() {
      started = false;
      if (kind == 0) gr0 = u0, gr1 = h1, ga = acc_h;
      if (kind == 2) gr0 = last_start, gr1 = u1, ga = acc_t;
      if (kind != 1) return;
      gc1 = end_of(gc0);
      const int64_t n_bags = gc1 - gc0;
      for (int64_t i = 0; i <= n_bags; ++i) kv_mtia_sc_peek_int(d, cb_all, KV_I64, gc0 - base + i, KV_CB_KEEP, &bound[i]);
      gr0 = bound[0];
      gr1 = bound[n_bags];
      ga = n_bags <= c.tail_bags ? acc_tail : acc;
    };
    auto start = [&]() {
      started = true;
      if (kind == 1) {
        kv_mtia_sc_push_int(d, cb_seg, KV_I64, bound, int32_t(gc1 - gc0 + 1));
        seg.count = int32_t(gc1 - gc0);
      } else {
        const int64_t b[2] = {gr0, gr1};
        kv_mtia_sc_push_int(d, cb_seg, KV_I64, b, 2);
        seg.count = 1;
      }
    };
    auto finish = [&]() {
      if (kind == 0) {
        kv_mtia_re_send(d, acc_h, to_prev);
        kind = b0 < b1 ? 1 : cont ? 2 : 3;
      } else if (kind == 1) {
        const int64_t n = gc1 - gc0;
        const kv_mtia_view dst = kv_mtia_rows(c.out + uint64_t(gc0 * c.row_bytes), 1, n * c.row_bytes, n * c.row_bytes);
        if (gr1 <= gr0) {
          kv_mtia_dma_out(d, dst, cb_zero, KV_CB_KEEP);
        } else {
          kv_mtia_re_drain(d, ga, cb_out, c.dtype, KV_OP_COPY, -1, 0);
          kv_mtia_dma_out(d, dst, cb_out, KV_CB_POP);
        }
        gc0 = gc1;
        if (gc0 >= b1) kind = cont ? 2 : 3;
      } else {
        const int cb_row = kv_mtia_cb_alloc(d, int32_t(c.row_bytes), 1);
        kv_mtia_re_recv(d, acc_t, from_next, 1);
        kv_mtia_re_drain(d, acc_t, cb_row, c.dtype, KV_OP_COPY, -1, 0);
        kv_mtia_dma_out(d, kv_mtia_rows(c.out + uint64_t(b1 * c.row_bytes), 1, c.row_bytes, c.row_bytes), cb_row,
                        KV_CB_POP);
        kind = 3;
      }
      if (kind != 3) setup();
    };
    // Runs of up to gather_rows rows that end at every cut between groups
    // (after the head, after each block, before the continued last bag), so
    // every run is summed once (a segment sum costs its whole run). The run
    // after a cut starts 4-aligned again (up to 3 rows gathered twice).
    // Cuts come in row order; `cut_bag` walks the blocks as setup() does.
    int cut_stage = h1 > u0 ? 0 : 1;
    int64_t cut_bag = b0;
    auto next_cut = [&]() -> int64_t {
      if (cut_stage == 0) {
        cut_stage = 1;
        return h1;
      }
      if (cut_stage == 1 && cut_bag < b1) {
        cut_bag = end_of(cut_bag);
        int64_t v = 0;
        kv_mtia_sc_peek_int(d, cb_all, KV_I64, cut_bag - base, KV_CB_KEEP, &v);
        return v;
      }
      if (cut_stage == 1) {
        cut_stage = 2;
        if (cont) return last_start;
      }
      return u1;
    };
    struct run {
      int64_t q, r1, cut;  // rows [q, r1); the cut it runs up to
    };
    auto advance = [&](run r) {  // the run after r (r1 == u1: none)
      run n = r;
      n.q = r.r1;
      if (r.r1 == r.cut) {
        n.q = r.cut - r.cut % 4;
        while (n.cut <= r.r1 && n.cut < u1) n.cut = next_cut();
      }
      // The last runs halve (down to taper_bytes of rows, at least 8): the
      // RE sums a run only once all of it is in, so a short last run leaves
      // a short sum after the last byte.
      const int64_t rem = u1 - n.q;
      int64_t len = c.gather_rows;
      const int64_t least = (taper_bytes / c.row_bytes + 3) / 4 * 4 > 8 ? (taper_bytes / c.row_bytes + 3) / 4 * 4 : 8;
      if (rem < 2 * len && least < len) len = (rem / 2 + 3) / 4 * 4 > least ? (rem / 2 + 3) / 4 * 4 : least;
      n.r1 = n.q + len < n.cut ? n.q + len : n.cut;
      return n;
    };
    // The first run needs only u0 (it may span several groups); later runs
    // end at cuts. Runs gathered speculatively (use_spec) come first and are
    // not gathered again (but the last of them, held until the split was
    // known). With KVP_IDX_AHEAD the indices of the next two runs go out
    // before a run's gather, so a gather's request latency hides behind the
    // transfers of the two runs before it, however short they are.
    const int64_t q0 = u0 - u0 % 4, spec_end = use_spec ? spec_r1 : -1;
    const int64_t first_end = use_spec ? spec_r1 : u1;
    run cur = {q0, q0 + c.gather_rows < first_end ? q0 + c.gather_rows : first_end, u1};
    int64_t idx_to = use_spec ? spec_r1 : q0, gathered_to = use_spec ? spec_held : q0;  // rows loaded / gathered
    auto next_of = [&](const run& r) {
      if (r.r1 >= spec_end) return advance(r);
      run n = {r.r1, r.r1 + c.gather_rows < spec_end ? r.r1 + c.gather_rows : spec_end, r.cut};
      while (n.cut < n.r1 && n.cut < u1) n.cut = next_cut();
      return n;
    };
    run ahead[2];
    int n_ahead = 0;
    auto issue = [&](bool first_run) {
      if (cur.r1 > idx_to) load_idx(cur.q, cur.r1), idx_to = cur.r1;
      if (first_run && cur.r1 > gathered_to) gather_run(cur.q, cur.r1), gathered_to = cur.r1;
      if (first_run)
        for (cur.cut = next_cut(); cur.cut < cur.r1 && cur.cut < u1;) cur.cut = next_cut();
      for (; KVP_IDX_AHEAD && n_ahead < 2 && (n_ahead ? ahead[n_ahead - 1] : cur).r1 < u1; ++n_ahead) {
        ahead[n_ahead] = next_of(n_ahead ? ahead[n_ahead - 1] : cur);
        if (ahead[n_ahead].r1 > idx_to) load_idx(ahead[n_ahead].q, ahead[n_ahead].r1), idx_to = ahead[n_ahead].r1;
      }
      if (cur.r1 > gathered_to) gather_run(cur.q, cur.r1), gathered_to = cur.r1;
    };
    issue(true);
    setup();
    for (bool first_run = true;; first_run = false) {
      const int64_t q = cur.q, n = cur.r1 - cur.q;
      if (!first_run) issue(false);
      while (kind != 3 && gr0 < q + n) {
        if (gr1 > gr0 && gr1 > q) {
          const bool first = !started;
          if (first) start();
          seg.flags = gr1 <= q + n ? KV_CB_POP : KV_CB_KEEP;
          kv_mtia_re_segment_sum(d, cb_rows, KV_CB_KEEP, int32_t(n), int32_t(c.dim), c.dtype, q, &seg, ga,
                                 first ? KV_MM_ZERO : 0u);
        }
        if (gr1 > q + n) break;
        finish();
      }
      kv_mtia_cb_pop(d, cb_rows);
      if (cur.r1 >= u1) break;
      if (n_ahead == 0) {
        cur = next_of(cur);
      } else {
        cur = ahead[0];
        ahead[0] = ahead[1];
        --n_ahead;
      }
    }
    while (kind != 3) finish();  // empty bags after the last row
    int64_t v = 0;
    kv_mtia_sc_peek_int(d, cb_all, KV_I64, 0, KV_CB_POP, &v);
  };
#else
  auto last_bag = [&]() {};
#endif
#if KVP_SPLIT
  if (whole) return stream(cb_union);
#endif
  if (b0 >= b1) return last_bag();
  if (e0 < 0) {
    e0 = end_of(b0);
    at0 = b0 % 4;
    load_offsets(d, c, cb_off, b0, e0);
  }
  // A block of bags: its offsets (peeked by the scalar core: the ends first,
  // so the first index DMA goes out early) and the run of indices it
  // gathers. Index DMAs start on a 32-byte boundary: up to 3 leading indices
  // belong to the previous block; their rows fall outside every segment.
  block blk[2];
  auto open = [&](block& k, int64_t c0, int64_t c1, int64_t at) {
    k.c0 = c0;
    k.c1 = c1;
    if (!KVP_PREFETCH && c0 != b0) load_offsets(d, c, cb_off, c0, c1);
    else if (KVP_PREFETCH && c1 < b1) load_offsets(d, c, cb_off, c1, end_of(c1));  // ahead of this block's gathers
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
      const int a = n_bags <= c.tail_bags ? acc_tail : acc;
      for (int64_t q = k.start; q < k.p1; q += c.gather_rows) {
        const int64_t n = k.p1 - q < c.gather_rows ? k.p1 - q : c.gather_rows;
        const bool last = q + c.gather_rows >= k.p1;
        // KVP_IDX_AHEAD: the next run's indices arrive while this run is gathered
        if (!KVP_IDX_AHEAD) load_idx(q, k.p1);
        else if (!last) load_idx(q + c.gather_rows, k.p1);
        else if (has_next) open(blk[1 - cur], k.c1, end_of(k.c1), k.c1 % 4), opened = true;
        kv_mtia_dma_gather(d, cb_rows, c.table, c.rows_e, c.row_bytes, c.row_bytes, cb_idx, int32_t(n), KV_I64, KV_CB_POP);
        if (last) seg.flags = KV_CB_POP;
        kv_mtia_re_segment_sum(d, cb_rows, KV_CB_POP, int32_t(n), int32_t(c.dim), c.dtype, q, &seg, a,
                               q == k.start ? KV_MM_ZERO : 0u);
      }
      kv_mtia_re_drain(d, a, cb_out, c.dtype, KV_OP_COPY, -1, 0);
      kv_mtia_dma_out(d, dst, cb_out, KV_CB_POP);
    }
    if (!has_next) break;
    if (!opened) open(blk[1 - cur], k.c1, end_of(k.c1), k.c1 % 4);
    cur = 1 - cur;
  }
  last_bag();
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
  // Cut bags only where a single output row can be stored (32-byte rows).
  c.split = KVP_SPLIT && c.unit == 1;
  // Pipelined (2+ slots): a program's last block is a quarter of a block,
  // with its own accumulator, so the drain and store after its last gather
  // are short (all programs store their last rows at about one time).
  auto tail_of = [&](int64_t block) {
    const int64_t t = (block / 4) / c.unit * c.unit;
    return t < c.unit ? c.unit : t;
  };
  int64_t block = KVP_BAG_BLOCK > max_block ? max_block : KVP_BAG_BLOCK;
  // fp32 accumulators of a block and of the last block (2+ slots), and the
  // split's two one-row accumulators, within the RE
  const int64_t acc_bytes = kv_mtia_query(dev, KV_MTIA_Q_ACC_BYTES);
  while (block > c.unit && (block + (KVP_SLOTS > 1 ? tail_of(block) : 0) + 2) * c.dim * 4 > acc_bytes) block /= 2;
  if (block < c.unit) block = c.unit;
  c.block = int32_t(block);
  int64_t rows = KVP_GATHER_ROWS;
  // At most a sixteenth of a program's share of the indices per run, so the
  // last runs (gather, RE, store after every other program finished) are short.
  const int32_t pes = kv_mtia_grid_rows(dev) * kv_mtia_grid_cols(dev);
  const int64_t share = (c.nnz / pes / 16 + 3) / 4 * 4;
  if (rows > share) rows = share < 16 ? 16 : share;
  // Local memory: indices and gathered rows per slot, out and zero blocks,
  // metadata (the split's: two windows, a program's offsets, one output row).
  const int64_t split_bytes = c.split ? (2 * (2 * window + 8) + 1024 + 8) * 8 + c.row_bytes + 64 : 0;
  const int64_t budget = kv_mtia_query(dev, KV_MTIA_Q_LS_BYTES) - 16384 - (KVP_SLOTS + 1) * block * c.row_bytes -
                         4 * (block + 2 * window + 8) * 8 - split_bytes;
  int64_t slots = KVP_SLOTS;
  // (runs stay multiples of 4 indices: every index DMA starts 32-byte aligned)
  // (the index CB has up to two slots more: the runs whose indices are ahead)
  auto need = [&](int64_t sl, int64_t r) { return sl * r * (c.row_bytes + 8) + 2 * KVP_IDX_AHEAD * r * 8; };
  while (rows > 16 && need(slots, rows) > budget) rows = rows / 8 * 4;
  while (slots > 1 && need(slots, rows) > budget) --slots;
  while (rows > 4 && need(slots, rows) > budget) rows = rows / 8 * 4;
  c.gather_rows = int32_t(rows);
  c.slots = int32_t(slots);
  c.tail_bags = slots > 1 ? tail_of(block) : c.block;
  if (c.bags == 0 || c.dim == 0) return 0;
  return kv_mtia_launch(dev, pes, program, &c);
}
