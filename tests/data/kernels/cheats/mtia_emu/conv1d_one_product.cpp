// Cheat for the attainable ceiling's DPE split (issue 24): the conv1d example
// (knowledge/examples/mtia_emu/conv1d.cpp) with the lo parts of its bf16x3
// split zeroed, so its fp32 products are computed as one bf16 product each,
// what a kernel below the ceiling's compute part (flops * 3 / DPE peak, three
// bf16 products per fp32 product) would compute. It keeps only bf16's
// precision and must fail the operator's fp32 tolerance.
// knowledge/examples/mtia_emu/conv1d.cpp: an honest mtia_emu kernel of conv1d (kevolve eval --backend mtia_emu).
// knowledge/templates/mtia_emu/conv1d.cpp.tmpl with the parameters below: shifted-weight DPE tiles in fp32 as
// bf16x3 (hi/lo splits, three products in fp32), double-buffered where local memory allows, tap matrices streamed
// per tile (broadcast down the PE column) through two slots of their own, so the next tap's weight DMA overlaps this
// tap's products even where the x pipeline has one slot (Cin = Cout = 128). DPE-bound: the three products triple the
// DPE's work (bench/README.md, mtia_emu_search).
#define KVP_SLOTS 2
#define KVP_LT_MAX 256
#define KVP_RESIDENT 0
#define KVP_WSLOTS 2
// kevolve mtia_emu template: conv1d (NCW, stride 1, zero padding P) as
// shifted-weight DPE tiles: y[b, :, l0 : l0 + Lt] = bias + sum over taps k of
// W_k (Cout x Cin) x X[b, :, l0 + k - P : ... + Lt] (Cin x Lt), the B operand
// a shifted window of one padded x tile. fp32 on a 16-bit DPE: every operand
// is split into bf16 hi + lo (round to nearest, then the remainder) and
// hi.hi + hi.lo + lo.hi accumulate in fp32 in the RE ("bf16x3": within a fifth
// of the fp32 tolerance at the operator's data; the dropped lo.lo is 2^-16 of
// a product).
//   1. the programs split the weights together, one tap matrix per part
//      (Cout x Cin bf16) into the workspace; barrier;
//   2. per tile: DMA the x window (rows of Cin), zero columns where it leaves
//      the sequence (MLU concat), SE split, per tap the MLU cuts the shifted
//      B operands, the DPE multiplies (tap matrices resident in local memory
//      when they fit, else streamed per tile), drain, bias on the SE, DMA out.
// Tiles of Lt outputs (a multiple of 8 dividing Lout, at most KVP_LT_MAX)
// when L and Lout are multiples of 8 (every row DMA aligned); otherwise whole
// samples, packed per aligned unit of samples through one staging slot
// (kv_mtia_mlu_pack). KVP_SLOTS CB slots on the x, operand and output buffers
// (2: also two accumulators, so the next tile's products overlap the drain).
// KVP_WSLOTS: slots of the streamed tap matrices (0: KVP_SLOTS, or whatever
// fewer the tile's local memory left): 2-3 let the next tap's weight DMA
// overlap this tap's products when the x pipeline had to drop to one slot.
#include <stdint.h>

#include <kevolve/abi.h>
#include <kevolve/mtia.h>

namespace {

struct cfg {
  uint64_t x, w, bias, y, ws;
  int32_t b, cin, cout, l, kw, p, lout;
  int32_t lt, ntl, tiles, unit, slots;  // tile length, tiles per sample, all tiles (or units), samples per unit
  int32_t wslots;                      // slots of the streamed tap matrices
  bool aligned, resident;
  int64_t mstride;  // bytes between tap matrices in the workspace
};

int64_t gcd64(int64_t a, int64_t b) { return b ? gcd64(b, a % b) : a; }

// RN split of n fp32 values: hi = bf16(v), lo = bf16(v - hi). src is popped.
void split(kv_mtia_device* d, int src, int hi, int t16, int t32, int rem, int lo, int32_t rows, int32_t cols) {
  kv_mtia_se_unary(d, KV_OP_COPY, src, KV_CB_KEEP, hi, rows, cols, KV_F32, KV_BF16, 1.0f, 0.0f);
  kv_mtia_se_unary(d, KV_OP_COPY, src, KV_CB_KEEP, t16, rows, cols, KV_F32, KV_BF16, 1.0f, 0.0f);
  kv_mtia_se_unary(d, KV_OP_COPY, t16, KV_CB_POP, t32, rows, cols, KV_BF16, KV_F32, 1.0f, 0.0f);
  kv_mtia_se_binary(d, KV_OP_SUB, src, KV_CB_POP, t32, KV_CB_POP, KV_Y_FULL, rem, rows, cols, KV_F32, KV_F32);
  // the cheat: lo = 0 * rem, so hi.lo and lo.hi add nothing and every
  // product carries one bf16 product's precision
  kv_mtia_se_unary(d, KV_OP_COPY, rem, KV_CB_POP, lo, rows, cols, KV_F32, KV_BF16, 0.0f, 0.0f);
}

struct work {  // split buffers sized for `elems` fp32 values
  int hi, t16, t32, rem, lo;
};
work alloc_work(kv_mtia_device* d, int64_t elems) {
  work s;
  s.hi = kv_mtia_cb_alloc(d, int32_t(elems * 2), 1);
  s.t16 = kv_mtia_cb_alloc(d, int32_t(elems * 2), 1);
  s.t32 = kv_mtia_cb_alloc(d, int32_t(elems * 4), 1);
  s.rem = kv_mtia_cb_alloc(d, int32_t(elems * 4), 1);
  s.lo = kv_mtia_cb_alloc(d, int32_t(elems * 2), 1);
  return s;
}

// 1. output channels [o0, o1) of the weights, split, one tap matrix per part.
void split_weights(kv_mtia_device* d, const cfg& c, const work& s, int64_t o0, int64_t o1) {
  const int32_t rows = int32_t(o1 - o0), per = c.cin * c.kw, n = rows * per;
  const int raw = kv_mtia_cb_alloc(d, n * 4, 1), tap = kv_mtia_cb_alloc(d, rows * c.cin * 2, 2);
  kv_mtia_dma_in(d, raw, kv_mtia_rows(c.w + uint64_t(o0) * per * 4, 1, int64_t(n) * 4, int64_t(n) * 4));
  split(d, raw, s.hi, s.t16, s.t32, s.rem, s.lo, 1, n);
  for (int part = 0; part < 2; ++part)
    for (int32_t k = 0; k < c.kw; ++k) {
      const int src = part ? s.lo : s.hi;
      kv_mtia_mlu_copy(d, src, k + 1 < c.kw ? KV_CB_KEEP : KV_CB_POP, k * 2, rows * c.cin, 2, c.kw * 2, tap);
      const uint64_t at = c.ws + uint64_t((k * 2 + part) * c.mstride) + uint64_t(o0) * c.cin * 2;
      kv_mtia_dma_out(d, kv_mtia_rows(at, 1, int64_t(rows) * c.cin * 2, int64_t(rows) * c.cin * 2), tap, KV_CB_POP);
    }
}

void program(kv_mtia_device* d, const void* user) {
  const cfg& c = *static_cast<const cfg*>(user);
  const int64_t pid = kv_mtia_program_id(d), np = kv_mtia_num_programs(d);
  const int32_t wid = c.lt + c.kw - 1;
  const int64_t ou = 16 / gcd64(c.cin, 16), units = (c.cout + ou - 1) / ou;
  const int64_t o0 = units * pid / np * ou;
  int64_t o1 = units * (pid + 1) / np * ou;
  if (o1 > c.cout) o1 = c.cout;
  const int64_t wn = o0 < o1 ? (o1 - o0) * c.cin * c.kw : 0, xn = int64_t(c.cin) * wid;
  const work s = alloc_work(d, wn > xn ? wn : xn);  // the weights' split, then every tile's
  if (o0 < o1) split_weights(d, c, s, o0, o1);
  kv_mtia_barrier(d);
  const int64_t t0 = int64_t(c.tiles) * pid / np, t1 = int64_t(c.tiles) * (pid + 1) / np;
  if (t0 >= t1) return;
  const int32_t cin = c.cin, cout = c.cout, lt = c.lt, mat = cout * cin * 2;
  // tap matrices: 2 * kw resident, or 2 streamed per tap
  int amat[2][16];
  const int nres = c.resident ? c.kw : 1;
  for (int part = 0; part < 2; ++part)
    for (int k = 0; k < nres; ++k) amat[part][k] = kv_mtia_cb_alloc(d, mat, c.resident ? 1 : c.wslots);
  if (c.resident)
    for (int part = 0; part < 2; ++part)
      for (int32_t k = 0; k < c.kw; ++k)
        kv_mtia_dma_in_bcast(d, amat[part][k], kv_mtia_rows(c.ws + uint64_t((k * 2 + part) * c.mstride), 1, mat, mat));
  const int bias = kv_mtia_cb_alloc(d, cout * 4, 1);
  kv_mtia_dma_in(d, bias, kv_mtia_rows(c.bias, 1, cout * 4, cout * 4));
  const int32_t xrow = c.aligned ? wid + 16 : c.l + 16;  // fp32 values of one raw x row (aligned superset)
  const int raw = kv_mtia_cb_alloc(d, cin * xrow * 4 + 64, c.slots);
  const int packed = kv_mtia_cb_alloc(d, cin * wid * 4, 1), padl = kv_mtia_cb_alloc(d, cin * wid * 4, 1);
  const int zl = kv_mtia_cb_alloc(d, cin * c.p * 4 + 4, 1), zr = kv_mtia_cb_alloc(d, cin * wid * 4, 1);
  const int xp = kv_mtia_cb_alloc(d, cin * wid * 4, 1);
  int bop[2];
  for (int part = 0; part < 2; ++part) bop[part] = kv_mtia_cb_alloc(d, cin * lt * 2, c.slots);
  // Two accumulators when they fit and slots > 1: item i+1's operands and
  // products are issued before item i is drained, so the DPE keeps working.
  const int nacc = c.slots > 1 && 2 * int64_t(cout) * lt * 4 <= 131072 ? 2 : 1;
  int accs[2];
  for (int k = 0; k < nacc; ++k) accs[k] = kv_mtia_acc_alloc(d, cout, lt);
  const int yt = kv_mtia_cb_alloc(d, cout * lt * 4, 1), yb = kv_mtia_cb_alloc(d, cout * lt * 4, c.slots);
  const int stage = c.aligned ? -1 : kv_mtia_cb_alloc(d, c.unit * cout * c.lout * 4, c.slots);
  // Items: (sample, l-tile) when aligned, else the samples of units [t0, t1).
  const int64_t i0 = c.aligned ? t0 : t0 * c.unit, i1 = c.aligned ? t1 : (t1 * c.unit < c.b ? t1 * c.unit : c.b);
  auto front = [&](int64_t i, int acc) {
    const int64_t b = c.aligned ? i / c.ntl : i;
    const int32_t l0 = c.aligned ? int32_t(i % c.ntl) * lt : 0;
    // the window [l0 - P, l0 - P + wid) of every x row, zero outside [0, L)
    const int32_t w0 = l0 - c.p, lp = w0 < 0 ? -w0 : 0, in0 = w0 < 0 ? 0 : w0;
    const int32_t in1 = w0 + wid > c.l ? c.l : w0 + wid, rp = wid - lp - (in1 - in0);
    if (c.aligned) {
      const int32_t a0 = in0 / 8 * 8, a1 = (in1 + 7) / 8 * 8 > c.l ? c.l : (in1 + 7) / 8 * 8;
      kv_mtia_dma_in(d, raw, kv_mtia_rows(c.x + (uint64_t(b) * cin * c.l + a0) * 4, cin, (a1 - a0) * 4, int64_t(c.l) * 4));
      kv_mtia_mlu_copy(d, raw, KV_CB_POP, (in0 - a0) * 4, cin, (in1 - in0) * 4, (a1 - a0) * 4, packed);
    } else {
      const uint64_t addr = c.x + uint64_t(b) * cin * c.l * 4, base = addr / 32 * 32;
      const int64_t len = int64_t(addr - base) + int64_t(cin) * c.l * 4;
      kv_mtia_dma_in(d, raw, kv_mtia_rows(base, 1, len, len));
      kv_mtia_mlu_copy(d, raw, KV_CB_POP, int32_t(addr - base) + in0 * 4, cin, (in1 - in0) * 4, c.l * 4, packed);
    }
    int cur = packed;
    int32_t curw = in1 - in0;
    if (lp > 0) {
      kv_mtia_se_fill(d, zl, cin, lp, KV_F32, 0.0f);
      kv_mtia_mlu_concat(d, zl, cur, KV_CB_POP, cin, lp * 4, curw * 4, padl);
      cur = padl;
      curw += lp;
    }
    if (rp > 0) {
      kv_mtia_se_fill(d, zr, cin, rp, KV_F32, 0.0f);
      kv_mtia_mlu_concat(d, cur, zr, KV_CB_POP, cin, curw * 4, rp * 4, xp);
    } else {
      kv_mtia_mlu_copy(d, cur, KV_CB_POP, 0, 1, cin * wid * 4, cin * wid * 4, xp);
    }
    split(d, xp, s.hi, s.t16, s.t32, s.rem, s.lo, cin, wid);
    for (int32_t k = 0; k < c.kw; ++k) {
      const uint32_t keep = k + 1 < c.kw ? KV_CB_KEEP : KV_CB_POP;
      kv_mtia_mlu_copy(d, s.hi, keep, k * 2, cin, lt * 2, wid * 2, bop[0]);
      kv_mtia_mlu_copy(d, s.lo, keep, k * 2, cin, lt * 2, wid * 2, bop[1]);
      int ah = amat[0][c.resident ? k : 0], al = amat[1][c.resident ? k : 0];
      if (!c.resident) {
        kv_mtia_dma_in_bcast(d, ah, kv_mtia_rows(c.ws + uint64_t(k * 2 * c.mstride), 1, mat, mat));
        kv_mtia_dma_in_bcast(d, al, kv_mtia_rows(c.ws + uint64_t((k * 2 + 1) * c.mstride), 1, mat, mat));
      }
      const uint32_t a_last = c.resident ? KV_CB_KEEP : KV_CB_POP;
      kv_mtia_dpe_load_b(d, bop[0], cin, lt, KV_BF16, KV_CB_POP);
      kv_mtia_dpe_mm(d, ah, cout, cin, cin, acc, (k == 0 ? KV_MM_ZERO : 0u) | KV_CB_KEEP);
      kv_mtia_dpe_mm(d, al, cout, cin, cin, acc, a_last);
      kv_mtia_dpe_load_b(d, bop[1], cin, lt, KV_BF16, KV_CB_POP);
      kv_mtia_dpe_mm(d, ah, cout, cin, cin, acc, a_last);
    }
  };
  auto back = [&](int64_t i, int acc) {
    kv_mtia_re_drain(d, acc, yt, KV_F32, KV_OP_COPY, -1, 0);
    kv_mtia_se_binary(d, KV_OP_ADD, yt, KV_CB_POP, bias, KV_CB_KEEP, KV_Y_COL, yb, cout, lt, KV_F32, KV_F32);
    if (c.aligned) {
      const uint64_t at = c.y + (uint64_t(i / c.ntl) * cout * c.lout + int64_t(i % c.ntl) * lt) * 4;
      kv_mtia_dma_out(d, kv_mtia_rows(at, cout, int64_t(lt) * 4, int64_t(c.lout) * 4), yb, KV_CB_POP);
      return;
    }
    const int64_t u0 = i / c.unit * c.unit, parts = c.b - u0 < c.unit ? c.b - u0 : c.unit;
    kv_mtia_mlu_pack(d, yb, KV_CB_POP, cout, lt, lt, 4, stage, int32_t(i - u0), int32_t(parts));
    if (i - u0 == parts - 1) {
      const int64_t bytes = parts * cout * c.lout * 4;
      kv_mtia_dma_out(d, kv_mtia_rows(c.y + uint64_t(u0) * cout * c.lout * 4, 1, bytes, bytes), stage, KV_CB_POP);
    }
  };
  for (int64_t i = i0; i < i1; ++i) {
    front(i, accs[(i - i0) % nacc]);
    if (nacc == 1) back(i, accs[0]);
    else if (i > i0) back(i - 1, accs[(i - 1 - i0) % nacc]);
  }
  if (nacc > 1) back(i1 - 1, accs[(i1 - 1 - i0) % nacc]);
}

}  // namespace

extern "C" int kevolve_kernel(const kv_args* a, kv_mtia_device* dev) {
  cfg c;
  const kv_tensor &x = a->inputs[0], &w = a->inputs[1];
  c.x = kv_mtia_addr(&x);
  c.w = kv_mtia_addr(&w);
  c.bias = kv_mtia_addr(&a->inputs[2]);
  c.y = kv_mtia_addr(&a->outputs[0]);
  c.ws = uint64_t(uintptr_t(a->workspace));
  c.b = int32_t(x.dims[0]);
  c.cin = int32_t(x.dims[1]);
  c.l = int32_t(x.dims[2]);
  c.cout = int32_t(w.dims[0]);
  c.kw = int32_t(w.dims[2]);
  c.lout = int32_t(a->outputs[0].dims[2]);
  c.p = (c.lout - c.l + c.kw - 1) / 2;
  c.slots = KVP_SLOTS;
  c.mstride = (int64_t(c.cout) * c.cin * 2 + 31) / 32 * 32;
  if (x.dtype != KV_F32 || c.kw > 16 || c.lout < 1 || !a->workspace || a->workspace_bytes < 2 * c.kw * c.mstride)
    return KV_ERR_UNSUPPORTED;
  // Tile length: a multiple of 8 dividing Lout (every row DMA aligned when L
  // and Lout are multiples of 8) that the B-cache (Cin x Lt bf16), the
  // accumulator (Cout x Lt fp32) and local memory hold, else whole samples;
  // the tap matrices stay resident when they fit too; fewer slots before
  // giving up.
  const int32_t pes = kv_mtia_grid_rows(dev) * kv_mtia_grid_cols(dev);
  const int64_t cin = c.cin, cout = c.cout, ls = kv_mtia_query(dev, KV_MTIA_Q_LS_BYTES) - 8192;
  const int64_t ou = 16 / gcd64(c.cin, 16), rows = ((c.cout + ou - 1) / ou + pes - 1) / pes * ou;
  const int64_t wn = rows * cin * c.kw, mats = 2 * cout * cin * 2;
  const bool can_tile = c.l % 8 == 0 && c.lout % 8 == 0;
  const int64_t sunit = 8 / gcd64(cout * c.lout % 8 == 0 ? 8 : cout * c.lout % 8, 8);
  c.lt = 0;
  for (int32_t lt = can_tile ? KVP_LT_MAX : c.lout; lt >= 1 && !c.lt; lt = can_tile ? lt - 8 : 0) {
    if (c.lout % lt != 0 || cin * lt * 2 > 65536 || cout * lt * 4 > 131072) continue;
    for (int32_t slots = KVP_SLOTS; slots >= 1; --slots) {  // a long tile first, then slots
      const int64_t wid = lt + c.kw - 1, xrow = can_tile ? wid + 16 : c.l + 16, xn = cin * wid;
      const int64_t need = (wn > xn ? wn : xn) * 14 + wn * 4 + rows * cin * 4 + 4 * cout +
                           (cin * xrow * 4 + 64) * slots + 4 * cin * wid * 4 + cin * c.p * 4 +
                           2 * cin * lt * 2 * slots + cout * lt * 4 * (1 + slots) +
                           (can_tile ? 0 : sunit * cout * c.lout * 4 * slots);
      // 19 other buffers beside the 2 * Kw resident tap matrices, 32 per PE
      const bool resident = KVP_RESIDENT && 2 * c.kw + 19 <= 32 && need + mats * c.kw <= ls;
      const int32_t wslots = KVP_WSLOTS ? KVP_WSLOTS : slots;
      if (need + mats * (resident ? c.kw : wslots) > ls) continue;
      c.lt = lt;
      c.slots = slots;
      c.wslots = wslots;
      c.aligned = can_tile;
      c.resident = resident;
      break;
    }
  }
  if (!c.lt) return KV_ERR_UNSUPPORTED;
  c.ntl = c.lout / c.lt;
  c.unit = c.aligned ? 1 : int32_t(sunit);
  c.tiles = c.aligned ? c.b * c.ntl : (c.b + c.unit - 1) / c.unit;
  return kv_mtia_launch(dev, pes, program, &c);
}
