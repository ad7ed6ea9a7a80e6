// knowledge/examples/mtia_emu/dot_interaction.cpp: an honest mtia_emu kernel of dot_interaction (kevolve eval --backend mtia_emu).
// knowledge/templates/mtia_emu/dot_interaction.cpp.tmpl with the parameters below: triple-buffered x, double-buffered
// operands, three passes in flight, four aligned units of samples per output DMA (the last group one unit), the Gram's
// symmetry (fp32 as four bf16 products: h.h + m.m, S = m.h + l.h, S + S^T added back by the RE's segment sums), h and m
// written once as bf16 by the SE and copied by the vector core for the DPE and the MLU's transposes, l as bf16 by the
// SE, and two F <= 16 samples per DPE pass. The SE's six split passes per sample (D = 128) or the DPE's 32-cycle fills
// (D = 64) bound it; bf16 (aligned samples) has the vector core copy x for the DPE and the MLU's transpose
// (bench/README.md, mtia_emu_search; knowledge/hardware/mtia2i/optimization.md).
#define KVP_SLOTS 3
#define KVP_OUT_UNITS 4
#define KVP_L_BF16 1
#define KVP_SYM 1
#define KVP_RE_SYM 1
#define KVP_FAN 2
#define KVP_STACK 2
// kevolve mtia_emu template: DLRM dot interaction, out[b, i(i-1)/2 + j] =
// x[b, i] . x[b, j] for j < i, as a Gram matrix x[b] x[b]^T on the DPE per
// sample with the strictly lower triangle packed by the MLU (kv_mtia_mlu_tril).
// bf16: the DPE multiplies x directly. fp32: the DPE multiplies 16-bit floats
// only, so x = h + m + l exactly, three bf16 parts cut by the SE (h = the top
// 16 bits of x by an integer AND, m the same of x - h, l = x - h - m), and the
// six products h.h + m.h + l.h + h.m + m.m + h.l accumulate in fp32 in the RE
// ("bf16x6"; the three of "bf16x3" miss the fp32 tolerance on N(0,1) data by
// up to 2x, the dropped m.l, l.m, l.l are below 2^-24 of the products).
// Per sample: the MLU cuts the A operands (F x D bf16) out of the split
// buffers and transposes the B operands (D x F); B cached once per part.
// Programs own contiguous sample ranges in units that keep every DMA 32-byte
// aligned; x comes per DPE pass (the aligned granules that cover it), the
// packed output per group of KVP_OUT_UNITS units through one staging slot.
// KVP_SLOTS CB slots on the x, operand and staging buffers: 1 serialises DMA,
// split, MLU and DPE; 2+ overlaps them (accumulators per pass in flight, each
// pass packed after the next one's products are issued). KVP_L_BF16 1: when every sample
// starts 32-byte aligned, the SE writes l = x - h - m as contiguous bf16 (exact)
// twice, as the A operand and as the transpose's source, so the MLU cuts two
// operands per sample instead of three (one SE pass more, two MLU copies less).
// KVP_SYM 1 (fp32): the Gram is symmetric, so m.h + h.m + l.h + h.l = S + S^T
// with S = m.h + l.h (B = h^T): four DPE products (h.h + m.m, and S in a
// second accumulator) instead of six and no transpose of l; S^T by the MLU
// (F x F fp32) and two SE adds per sample. KVP_RE_SYM 1 (with sym): the RE
// adds S and S^T into the h.h + m.m accumulator (segment sums, one row per
// segment) instead of the SE, which then only splits.
// KVP_FAN (fp32, samples 32-byte aligned): 0 = the MLU cuts each part out of
// an fp32 copy the SE wrote for it (two cuts and a transpose per part); 1 =
// the SE writes h and m once as contiguous bf16 (exact: they are bf16 values)
// and the MLU copies the A operand and transposes; 2 = the same, but the idle
// vector core copies each part twice (A operand, transpose source, 64 B/cycle
// as integers), so the MLU only transposes. l always leaves the SE as bf16.
// KVP_STACK 2: when 2F <= 32, two samples share a DPE pass (A = their 2F rows,
// B = their 2F columns: one 32-column tile instead of two half-empty ones, half
// the pipeline fills and B loads); their Grams are the two diagonal F x F
// blocks of the 2F x 2F product, packed by the MLU.
#include <stdint.h>

#include <kevolve/abi.h>
#include <kevolve/mtia.h>

namespace {

struct cfg {
  uint64_t x, out;
  int64_t b, f, d, p;  // samples, features, dim, pairs
  int32_t dtype, eb, unit, group, slots, op_slots, stack;
  bool l_bf16;  // l straight from the SE as bf16 (samples 32-byte aligned)
  bool sym;     // four products and S + S^T (fp32)
  bool re_sym;  // sym: S + S^T added in the accumulator by the RE
  int32_t fan;  // operands: 0 MLU cuts, 1 MLU copies (fp32: of the SE's bf16 h and m), 2 vector core copies
};

int64_t gcd64(int64_t a, int64_t b) { return b ? gcd64(b, a % b) : a; }
// Smallest u with u * bytes a multiple of 32.
int64_t align_unit(int64_t bytes) { return 32 / gcd64(bytes % 32 == 0 ? 32 : bytes % 32, 32); }

// Local memory of program()'s buffers (keep in step with its cb_allocs).
int64_t local_bytes(const cfg& c) {
  const int64_t r = c.stack * c.f, nq = r * c.d, xbytes = nq * c.eb + 64, op = nq * 2;
  const bool split = c.dtype == KV_F32;
  const int64_t parts = split ? 3 : 1, fanned = c.sym ? 2 : 3;
  int64_t n = xbytes * c.slots + parts * op * 2 * c.op_slots + op * (c.fan == 2 ? c.op_slots : 1) +
              2 * r * r * c.eb + (c.stack > 1 ? 2 * c.f * c.f * c.eb : 0) +
              c.group * c.p * c.eb * (c.slots + (c.slots > 1 ? 1 : 0));  // + the last group's staging slot
  if (split) n += c.fan ? xbytes * 3 + fanned * op * 2 : xbytes * 6;
  if (c.sym) n += (c.re_sym ? 3 : 5) * 2 * r * r * 4 + (r + 1) * 4;  // sym's R x R fp32 buffers of 2 slots
  return n;
}

void program(kv_mtia_device* d, const void* user) {
  const cfg& c = *static_cast<const cfg*>(user);
  const int64_t units = (c.b + c.unit - 1) / c.unit, pid = kv_mtia_program_id(d), np = kv_mtia_num_programs(d);
  const int64_t s0 = units * pid / np * c.unit;
  int64_t s1 = units * (pid + 1) / np * c.unit;
  if (s1 > c.b) s1 = c.b;
  if (s0 >= s1) return;
  const int32_t F = int32_t(c.f), D = int32_t(c.d), fd = F * D, rq = c.stack * F, nq = rq * D;
  const bool split = c.dtype == KV_F32;
  const int32_t xbytes = nq * c.eb + 64;  // the granules covering one pass's samples
  const int nparts = split ? 3 : 1;
  const int xb = kv_mtia_cb_alloc(d, xbytes, c.slots);
  int hs = -1, hm = -1, r1 = -1, ms = -1, mm = -1, lm = -1, pv[3] = {-1, -1, -1};
  if (split) {
    hs = kv_mtia_cb_alloc(d, xbytes, 1);
    r1 = kv_mtia_cb_alloc(d, xbytes, 1);
    ms = kv_mtia_cb_alloc(d, xbytes, 1);
    if (c.fan) {
      for (int k = 0; k < (c.sym ? 2 : 3); ++k) pv[k] = kv_mtia_cb_alloc(d, nq * 2, 2);
    } else {
      hm = kv_mtia_cb_alloc(d, xbytes, 1);
      mm = kv_mtia_cb_alloc(d, xbytes, 1);
      lm = kv_mtia_cb_alloc(d, c.l_bf16 ? nq * 2 : xbytes, 1);
    }
  }
  int a_op[3], b_op[3];  // with l_bf16 (or fan) and sym the SE writes a_op[2]
  for (int k = 0; k < nparts; ++k) {
    a_op[k] = kv_mtia_cb_alloc(d, nq * 2, c.op_slots);
    b_op[k] = kv_mtia_cb_alloc(d, nq * 2, c.op_slots);
  }
  const int tsrc = kv_mtia_cb_alloc(d, nq * 2, c.fan == 2 ? c.op_slots : 1);
  // sym: G = (h.h + m.m) + S + S^T; the RE drains S twice (for the add and
  // the MLU's transpose). The SE adds, or with re_sym the RE adds both into
  // the h.h + m.m accumulator (segment sums, one row per segment: boundaries
  // 0..r in bnd, pushed once by the scalar core).
  int g1 = -1, sa = -1, sb = -1, sbt = -1, t1 = -1, bnd = -1;
  if (c.sym) {
    sb = kv_mtia_cb_alloc(d, rq * rq * 4, 2);
    sbt = kv_mtia_cb_alloc(d, rq * rq * 4, 2);
    sa = kv_mtia_cb_alloc(d, rq * rq * 4, 2);
    if (c.re_sym) {
      bnd = kv_mtia_cb_alloc(d, (rq + 1) * 4, 1);
      int64_t v[65];
      for (int32_t k = 0; k <= rq; ++k) v[k] = k;
      kv_mtia_sc_push_int(d, bnd, KV_I32, v, rq + 1);
    } else {
      g1 = kv_mtia_cb_alloc(d, rq * rq * 4, 2);
      t1 = kv_mtia_cb_alloc(d, rq * rq * 4, 2);
    }
  }
  const int gram = kv_mtia_cb_alloc(d, rq * rq * c.eb, 2);
  const int blk = c.stack > 1 ? kv_mtia_cb_alloc(d, F * F * c.eb, 2) : -1;
  const int stage = kv_mtia_cb_alloc(d, int32_t(c.group * c.p * c.eb), c.slots);
  // slots > 1: the program's last group stages apart, its passes alternating
  // with the group before it (see the loop below)
  const int stage_last = c.slots > 1 ? kv_mtia_cb_alloc(d, int32_t(c.group * c.p * c.eb), 1) : stage;
  // With slots > 1 pass i is drained and packed after pass i+1's operands and
  // products are issued (re_sym: S and S^T added after pass i+1, the sum
  // drained and packed after pass i+2), so the engines' in-order queues overlap
  // passes. Accumulators have the shape of the product: one set per pass size
  // (c.stack samples, and 1 for a group's odd sample), one per pass in flight.
  const int lag = c.slots > 1 ? 1 : 0, lag_b = c.re_sym ? 2 * lag : lag, nacc = lag_b + 1;
  int accs[2][3], sacc[2][3];
  for (int z = 0; z < (c.stack > 1 ? 2 : 1); ++z)
    for (int k = 0; k < nacc; ++k) {
      const int32_t r = z == 0 ? rq : F;
      accs[z][k] = kv_mtia_acc_alloc(d, r, r);
      sacc[z][k] = c.sym ? kv_mtia_acc_alloc(d, r, r) : -1;
    }
  struct pass {
    int acc, sacc, stage;
    int32_t n, part, gn;  // samples, part of the first in the staging slot, samples of its group
    int64_t g0;           // first sample of its group
  };
  // re_sym: S and S^T added into the h.h + m.m accumulator
  auto add_back = [&](const pass& q) {
    const int32_t r = q.n * F;
    const kv_mtia_segments seg = {bnd, KV_CB_KEEP, KV_I32, 0, r};
    kv_mtia_re_drain(d, q.sacc, sa, KV_F32, KV_OP_COPY, -1, 0);
    kv_mtia_re_drain(d, q.sacc, sb, KV_F32, KV_OP_COPY, -1, 0);
    kv_mtia_mlu_transpose(d, sb, KV_CB_POP, r, r, 4, sbt);
    kv_mtia_re_segment_sum(d, sa, KV_CB_POP, r, r, KV_F32, 0, &seg, q.acc, 0u);
    kv_mtia_re_segment_sum(d, sbt, KV_CB_POP, r, r, KV_F32, 0, &seg, q.acc, 0u);
  };
  auto finish = [&](const pass& q) {
    const int32_t r = q.n * F;
    if (c.sym && !c.re_sym) {
      kv_mtia_re_drain(d, q.acc, g1, KV_F32, KV_OP_COPY, -1, 0);
      kv_mtia_re_drain(d, q.sacc, sa, KV_F32, KV_OP_COPY, -1, 0);
      kv_mtia_re_drain(d, q.sacc, sb, KV_F32, KV_OP_COPY, -1, 0);
      kv_mtia_mlu_transpose(d, sb, KV_CB_POP, r, r, 4, sbt);
      kv_mtia_se_binary(d, KV_OP_ADD, g1, KV_CB_POP, sa, KV_CB_POP, KV_Y_FULL, t1, r, r, KV_F32, KV_F32);
      kv_mtia_se_binary(d, KV_OP_ADD, t1, KV_CB_POP, sbt, KV_CB_POP, KV_Y_FULL, gram, r, r, KV_F32, c.dtype);
    } else {
      kv_mtia_re_drain(d, q.acc, gram, c.dtype, KV_OP_COPY, -1, 0);
    }
    // sample j's Gram is the diagonal block j of the r x r product
    kv_mtia_mlu_tril(d, gram, q.n > 1 ? KV_CB_KEEP : KV_CB_POP, F, r, c.eb, q.stage, q.part, q.gn);
    for (int32_t j = 1; j < q.n; ++j) {
      kv_mtia_mlu_copy(d, gram, j + 1 < q.n ? KV_CB_KEEP : KV_CB_POP, (j * F * r + j * F) * c.eb, F, F * c.eb,
                       r * c.eb, blk);
      kv_mtia_mlu_tril(d, blk, KV_CB_POP, F, F, c.eb, q.stage, q.part + j, q.gn);
    }
    if (q.part + q.n == q.gn) {  // the group's last pass: its packed rows leave
      const int64_t bytes = int64_t(q.gn) * c.p * c.eb;
      kv_mtia_dma_out(d, kv_mtia_rows(c.out + uint64_t(q.g0) * uint64_t(c.p) * c.eb, 1, bytes, bytes), q.stage,
                      KV_CB_POP);
    }
  };
  // fp32: x = h + m + l, every part exactly a bf16 (its top 16 bits). src[k]
  // is where the MLU cuts part k from (fan 0), `at` the byte offset of it.
  auto split_parts = [&](int32_t len, int src[3]) {
    const int32_t n = len / 4 + (len % 4 ? 1 : 0);
    if (c.fan) {  // samples aligned: len = n * 4, the parts leave as bf16
      kv_mtia_int_op(d, 0, KV_IOP_AND, xb, KV_CB_KEEP, -1, 0, hs, n, KV_I32, 0xFFFF0000u);
      kv_mtia_se_unary(d, KV_OP_COPY, hs, KV_CB_KEEP, pv[0], 1, n, KV_F32, KV_BF16, 1.0f, 0.0f);
      kv_mtia_se_binary(d, KV_OP_SUB, xb, KV_CB_POP, hs, KV_CB_POP, KV_Y_FULL, r1, 1, n, KV_F32, KV_F32);
      kv_mtia_int_op(d, 0, KV_IOP_AND, r1, KV_CB_KEEP, -1, 0, ms, n, KV_I32, 0xFFFF0000u);
      kv_mtia_se_unary(d, KV_OP_COPY, ms, KV_CB_KEEP, pv[1], 1, n, KV_F32, KV_BF16, 1.0f, 0.0f);
      kv_mtia_se_binary(d, KV_OP_SUB, r1, KV_CB_POP, ms, KV_CB_POP, KV_Y_FULL, c.sym ? a_op[2] : pv[2], 1, n, KV_F32,
                        KV_BF16);
      return;
    }
    kv_mtia_int_op(d, 0, KV_IOP_AND, xb, KV_CB_KEEP, -1, 0, hm, n, KV_I32, 0xFFFF0000u);
    kv_mtia_int_op(d, 0, KV_IOP_AND, xb, KV_CB_KEEP, -1, 0, hs, n, KV_I32, 0xFFFF0000u);
    kv_mtia_se_binary(d, KV_OP_SUB, xb, KV_CB_POP, hs, KV_CB_POP, KV_Y_FULL, r1, 1, n, KV_F32, KV_F32);
    kv_mtia_int_op(d, 0, KV_IOP_AND, r1, KV_CB_KEEP, -1, 0, mm, n, KV_I32, 0xFFFF0000u);
    kv_mtia_int_op(d, 0, KV_IOP_AND, r1, KV_CB_KEEP, -1, 0, ms, n, KV_I32, 0xFFFF0000u);
    if (c.l_bf16) {  // l is exactly a bf16: narrowing it loses nothing
      const uint32_t f = c.sym ? KV_CB_POP : KV_CB_KEEP;  // sym: l is only an A operand
      kv_mtia_se_binary(d, KV_OP_SUB, r1, f, ms, f, KV_Y_FULL, a_op[2], 1, n, KV_F32, KV_BF16);
      if (!c.sym)
        kv_mtia_se_binary(d, KV_OP_SUB, r1, KV_CB_POP, ms, KV_CB_POP, KV_Y_FULL, lm, 1, n, KV_F32, KV_BF16);
    } else {
      kv_mtia_se_binary(d, KV_OP_SUB, r1, KV_CB_POP, ms, KV_CB_POP, KV_Y_FULL, lm, 1, n, KV_F32, KV_F32);
    }
    src[0] = hm;
    src[1] = mm;
    src[2] = lm;
  };
  // A = part k as r x D bf16 (a_op[k]); B = its transpose (b_op[k]).
  auto operands = [&](int32_t r, int src[3], int32_t at) {
    const int32_t ne = r * D;
    for (int k = 0; k < nparts; ++k) {
      const bool need_b = !(c.sym && k == 2);  // sym: no l^T
      if (split && c.fan) {
        if (!need_b) continue;  // the SE wrote a_op[2]
        if (c.fan == 1) {
          kv_mtia_mlu_transpose(d, pv[k], KV_CB_KEEP, r, D, 2, b_op[k]);
          kv_mtia_mlu_copy(d, pv[k], KV_CB_POP, 0, 1, ne * 2, ne * 2, a_op[k]);
        } else {  // two bf16 per 32-bit lane: ne is even (aligned samples)
          kv_mtia_int_op(d, 1, KV_IOP_OR, pv[k], KV_CB_KEEP, -1, 0, a_op[k], ne / 2, KV_I32, 0);
          kv_mtia_int_op(d, 1, KV_IOP_OR, pv[k], KV_CB_POP, -1, 0, tsrc, ne / 2, KV_I32, 0);
          kv_mtia_mlu_transpose(d, tsrc, KV_CB_POP, r, D, 2, b_op[k]);
        }
        continue;
      }
      if (k == 2 && c.l_bf16) {  // l: already contiguous bf16
        if (need_b) kv_mtia_mlu_transpose(d, lm, KV_CB_POP, r, D, 2, b_op[k]);
        continue;
      }
      if (!split && c.fan == 1) {  // bf16, aligned: the MLU transposes x and copies it as the A operand
        kv_mtia_mlu_transpose(d, src[0], KV_CB_KEEP, r, D, 2, b_op[0]);
        kv_mtia_mlu_copy(d, src[0], KV_CB_POP, 0, 1, ne * 2, ne * 2, a_op[0]);
        continue;
      }
      if (!split && c.fan == 2) {  // bf16, aligned: the vector core copies x twice, the MLU only transposes
        kv_mtia_int_op(d, 1, KV_IOP_OR, src[0], KV_CB_KEEP, -1, 0, a_op[0], ne / 2, KV_I32, 0);
        kv_mtia_int_op(d, 1, KV_IOP_OR, src[0], KV_CB_POP, -1, 0, tsrc, ne / 2, KV_I32, 0);
        kv_mtia_mlu_transpose(d, tsrc, KV_CB_POP, r, D, 2, b_op[0]);
        continue;
      }
      const int32_t rows = split ? ne : 1, row_bytes = split ? 2 : ne * 2, stride = split ? 4 : ne * 2;
      kv_mtia_mlu_copy(d, src[k], need_b ? KV_CB_KEEP : KV_CB_POP, at, rows, row_bytes, stride, a_op[k]);
      if (!need_b) continue;
      kv_mtia_mlu_copy(d, src[k], KV_CB_POP, at, rows, row_bytes, stride, tsrc);
      kv_mtia_mlu_transpose(d, tsrc, KV_CB_POP, r, D, 2, b_op[k]);
    }
  };
  pass ring[4];
  int64_t np_ = 0;  // passes issued
  // After pass t is issued: pass t - lag_b drained and packed, S and S^T of
  // pass t - lag added in its accumulator (re_sym; in this order, so that the
  // MLU packs a pass whose sum the RE finished while it cut the operands).
  auto stages = [&](int64_t t) {
    const bool back = c.re_sym && t - lag >= 0 && t - lag < np_;
    if (back && lag == 0) add_back(ring[t % 4]);  // serial: the sum before its drain
    if (t - lag_b >= 0 && t - lag_b < np_) finish(ring[(t - lag_b) % 4]);
    if (back && lag > 0) add_back(ring[(t - lag) % 4]);
  };
  // The program's last output DMA waits for everything: keep it short (one
  // unit of whole passes) where the group before it still ends aligned.
  auto group_len = [&](int64_t g0) {
    int32_t gn = int32_t(s1 - g0 < c.group ? s1 - g0 : c.group);
    const int32_t tail = c.unit * c.stack;
    if (s1 - g0 <= c.group && gn > tail && (s1 - g0) % c.unit == 0) gn -= tail;
    return gn;
  };
  auto issue_pass = [&](int64_t g0, int32_t gn, int32_t s, int stage_cb) {
    const int32_t qn = gn - s < c.stack ? gn - s : c.stack, r = qn * F;
    const int z = qn == c.stack ? 0 : 1, i = int(np_ % nacc);
    const pass cur = {accs[z][i], sacc[z][i], stage_cb, qn, s, gn, g0};
    const uint64_t addr = c.x + uint64_t(g0 + s) * uint64_t(fd) * c.eb, base = addr / 32 * 32;
    const int32_t off = int32_t(addr - base), len = off + r * D * c.eb;
    kv_mtia_dma_in(d, xb, kv_mtia_rows(base, 1, len, len));
    int src[3] = {xb, -1, -1};
    if (split) split_parts(len, src);
    operands(r, src, split ? off + 2 : off);  // the high half of each fp32 (little endian) is its bf16
    if (c.sym) {  // B = h^T: h.h, S = m.h + l.h; B = m^T: + m.m
      kv_mtia_dpe_load_b(d, b_op[0], D, r, KV_BF16, KV_CB_POP);
      kv_mtia_dpe_mm(d, a_op[0], r, D, D, cur.acc, KV_MM_ZERO);
      kv_mtia_dpe_mm(d, a_op[1], r, D, D, cur.sacc, KV_MM_ZERO | KV_CB_KEEP);
      kv_mtia_dpe_mm(d, a_op[2], r, D, D, cur.sacc, 0u);
      kv_mtia_dpe_load_b(d, b_op[1], D, r, KV_BF16, KV_CB_POP);
      kv_mtia_dpe_mm(d, a_op[1], r, D, D, cur.acc, 0u);
    }
    // Gram: B = h^T with A = h, m, l; B = m^T with A = h, m; B = l^T with A = h
    for (int k = 0; k < (c.sym ? 0 : nparts); ++k) {
      kv_mtia_dpe_load_b(d, b_op[k], D, r, KV_BF16, KV_CB_POP);
      for (int j = 0; j < nparts - k; ++j) {
        const bool last_use = j + k == nparts - 1;  // A_j is used by parts 0 .. nparts-1-j
        kv_mtia_dpe_mm(d, a_op[j], r, D, D, cur.acc, (k == 0 && j == 0 ? KV_MM_ZERO : 0u) | (last_use ? 0u : KV_CB_KEEP));
      }
    }
    ring[np_ % 4] = cur;
    stages(np_++);
  };
  for (int64_t g0 = s0; g0 < s1;) {
    const int32_t gn = group_len(g0);
    const int64_t g1 = g0 + gn;
    const int32_t hn = g1 < s1 ? group_len(g1) : 0;
    if (stage_last != stage && hn > 0 && g1 + hn == s1) {
      // The last two groups: their passes alternate, the last two passes
      // the last group's, so the group before it is packed about when the
      // last x arrives (packing runs a pass behind, on an MLU a little
      // behind the DMA) and its output DMA keeps the SRAM busy while the
      // last passes are transposed, multiplied and packed: in order, both
      // stores would follow the last pass.
      const int32_t pa = (gn + c.stack - 1) / c.stack, pb = (hn + c.stack - 1) / c.stack;
      const int32_t late = pb < 2 ? pb : 2, alt = pb - late < pa ? pb - late : pa;
      int32_t s = 0, t = 0;
      for (int32_t k = 0; k < pa - alt; ++k, s += c.stack) issue_pass(g0, gn, s, stage);
      for (int32_t k = 0; k < alt; ++k, s += c.stack, t += c.stack) {
        issue_pass(g0, gn, s, stage);
        issue_pass(g1, hn, t, stage_last);
      }
      for (; t < hn; t += c.stack) issue_pass(g1, hn, t, stage_last);
      break;
    }
    for (int32_t s = 0; s < gn; s += c.stack) issue_pass(g0, gn, s, stage);
    g0 = g1;
  }
  for (int64_t t = np_; t < np_ + lag_b; ++t) stages(t);
}

}  // namespace

extern "C" int kevolve_kernel(const kv_args* a, kv_mtia_device* dev) {
  const kv_tensor& x = a->inputs[0];
  cfg c;
  c.x = kv_mtia_addr(&x);
  c.out = kv_mtia_addr(&a->outputs[0]);
  c.b = x.dims[0];
  c.f = x.dims[1];
  c.d = x.dims[2];
  c.p = c.f * (c.f - 1) / 2;
  c.dtype = x.dtype;
  c.eb = x.dtype == KV_F32 ? 4 : 2;
  if ((c.dtype != KV_F32 && c.dtype != KV_BF16) || c.f < 2 || c.f > 64 || c.d < 1) return KV_ERR_UNSUPPORTED;
  // Output groups start where the packed rows are 32-byte aligned.
  c.unit = int32_t(align_unit(c.p * c.eb));
  c.slots = KVP_SLOTS;
  c.op_slots = KVP_SLOTS > 1 ? 2 : 1;
  c.group = c.unit * KVP_OUT_UNITS;
  // Samples that start 32-byte aligned: every pass's x begins its slot.
  const bool aligned = c.x % 32 == 0 && c.f * c.d * c.eb % 32 == 0;
  c.l_bf16 = KVP_L_BF16 && aligned && c.dtype == KV_F32;
  c.sym = KVP_SYM && c.dtype == KV_F32;
  c.fan = aligned ? KVP_FAN : 0;
  c.re_sym = KVP_RE_SYM && c.sym;
  c.stack = 2 * c.f <= 32 ? KVP_STACK : 1;
  if (c.group % c.stack) c.group *= c.stack;  // whole passes per output group
  // Local memory: shrink the staging group, then stacking, the operand slots.
  const int64_t ls = kv_mtia_query(dev, KV_MTIA_Q_LS_BYTES) - 8192;
  while (local_bytes(c) > ls) {
    if (c.group > c.unit) c.group -= c.unit;
    else if (c.stack > 1) c.stack = 1;
    else if (c.sym) c.sym = false;
    else if (c.op_slots > 1) c.op_slots = 1;
    else if (c.slots > 1) --c.slots;
    else return KV_ERR_UNSUPPORTED;
  }
  const int32_t pes = kv_mtia_grid_rows(dev) * kv_mtia_grid_cols(dev);
  return kv_mtia_launch(dev, pes, program, &c);
}
