// knowledge/examples/mtia_emu/feature_hash.cpp: an honest mtia_emu kernel of feature_hash (kevolve eval --backend mtia_emu).
// knowledge/templates/mtia_emu/feature_hash.cpp.tmpl with the parameters below: the hash on 32-bit halves (the MLU
// splits and joins the words; a 32-bit Barrett remainder with two corrections, AND for power-of-two tables), every
// 3rd chunk on the vector core, 512-id chunks, triple-buffered DMA, the MLU splitting three chunks ahead.
// Compute-bound on the emulated chip at prime tables (30 32-bit passes per id on the SE and vector core together).
// Tables from 2^30 that are not a power of two take the 64-bit hash with the Barrett reciprocal.
#define KVP_SLOTS 3
#define KVP_CHUNK_KB 4
#define KVP_MOD_RECIPROCAL 1
#define KVP_ENGINE_SPLIT 1
#define KVP_VEC_EVERY 3
#define KVP_HALVES 1
// kevolve mtia_emu template: feature_hash, out = fmix64(ids ^ salt) mod table,
// as 64-bit integer vector ops (kv_mtia_int_op) on the SE / vector core.
// Each program owns a contiguous range of ids (cut at 4 elements so every DMA
// is 32-byte aligned) and streams it in chunks of ~KVP_CHUNK_KB KiB; KVP_SLOTS
// CB slots on the DMA stages double-buffer DMA against the hash. The hash
// walks three work buffers per engine (one engine per buffer).
// KVP_MOD_*: rem = KV_IOP_REM_U (an iterative divider), reciprocal = Barrett
// reduction with floor((2^64-1)/table) from the host (MULHI_U, MUL, SUB and
// two conditional subtracts), or AND when the table is a power of two.
// KVP_ENGINE_*: se, vec, or split (every KVP_VEC_EVERY-th chunk on the
// vector core, so both engines hash). KVP_HALVES 1: the hash on 32-bit halves
// split and joined by the MLU, with a 32-bit Barrett remainder (half the
// passes; tables from 2^30 that are not a power of two keep the KV_I64 hash).
#include <stdint.h>

#include <kevolve/abi.h>
#include <kevolve/mtia.h>

#if defined(KVP_ENGINE_VEC)
#define FH_ENGINE 1
#else
#define FH_ENGINE 0
#endif
#if defined(KVP_ENGINE_SPLIT)
#define FH_ENGINES 2
#else
#define FH_ENGINES 1
#endif

namespace {

struct cfg {
  uint64_t ids, out, salt, table, magic;
  int64_t n;
  int32_t chunk, slots, engines, vec_every, pow2;
};

struct lane {  // the buffers of one engine
  int e, in, w[3], out;
};

// The hash of one chunk: a value lives in one work buffer; every op reads it
// and writes another free one.
struct chain {
  kv_mtia_device* d;
  const lane& l;
  int n, cur;  // cur: the buffer holding the value (-1: l.in)
  int src() const { return cur < 0 ? l.in : l.w[cur]; }
  int free_buf(int not_this) const {
    for (int k = 0; k < 3; ++k)
      if (k != cur && k != not_this) return k;
    return -1;
  }
  // value = value op imm; the last op writes to dest (the output buffer)
  void op(int iop, uint64_t imm, int dest = -2) {
    const int nxt = dest == -2 ? free_buf(-1) : -1;
    kv_mtia_int_op(d, l.e, iop, src(), KV_CB_POP, -1, 0, nxt < 0 ? dest : l.w[nxt], n, KV_I64, imm);
    cur = nxt;
  }
  // value = value ^ (value >> s)
  void xorshift(int s) {
    const int a = free_buf(-1), b = free_buf(a);
    kv_mtia_int_op(d, l.e, KV_IOP_SHR_U, src(), KV_CB_KEEP, -1, 0, l.w[a], n, KV_I64, uint64_t(s));
    kv_mtia_int_op(d, l.e, KV_IOP_XOR, l.w[a], KV_CB_POP, src(), KV_CB_POP, l.w[b], n, KV_I64, 0);
    cur = b;
  }
  // value = value >= t ? value - t : value
  void reduce_once(uint64_t t, int dest = -2) {
    const int m = free_buf(-1);
    kv_mtia_int_op(d, l.e, KV_IOP_GE_U, src(), KV_CB_KEEP, -1, 0, l.w[m], n, KV_I64, t);
    const int nxt = dest == -2 ? free_buf(m) : -1;
    kv_mtia_int_op(d, l.e, KV_IOP_ADD_IF, src(), KV_CB_POP, l.w[m], KV_CB_POP, nxt < 0 ? dest : l.w[nxt], n, KV_I64,
                   0 - t);
    cur = nxt;
  }
};

void hash_chunk(kv_mtia_device* d, const cfg& c, const lane& l, int n) {
  chain h{d, l, n, -1};
  if (c.salt) h.op(KV_IOP_XOR, c.salt);
  h.xorshift(33);
  h.op(KV_IOP_MUL, 0xff51afd7ed558ccdULL);
  h.xorshift(33);
  h.op(KV_IOP_MUL, 0xc4ceb9fe1a85ec53ULL);
  h.xorshift(33);
#if defined(KVP_MOD_RECIPROCAL)
  if (c.pow2) {
    h.op(KV_IOP_AND, c.table - 1, l.out);
    return;
  }
  // q = mulhi(x, magic) is the quotient or up to 2 less: r = x - q*t < 3t
  const int x = h.cur, q = h.free_buf(-1), qt = h.free_buf(q);
  kv_mtia_int_op(d, l.e, KV_IOP_MULHI_U, l.w[x], KV_CB_KEEP, -1, 0, l.w[q], n, KV_I64, c.magic);
  kv_mtia_int_op(d, l.e, KV_IOP_MUL, l.w[q], KV_CB_POP, -1, 0, l.w[qt], n, KV_I64, c.table);
  kv_mtia_int_op(d, l.e, KV_IOP_SUB, l.w[x], KV_CB_POP, l.w[qt], KV_CB_POP, l.w[q], n, KV_I64, 0);
  h.cur = q;
  h.reduce_once(c.table);
  h.reduce_once(c.table, l.out);
#else
  h.op(KV_IOP_REM_U, c.table, l.out);
#endif
}

void program(kv_mtia_device* d, const void* user) {
  const cfg& c = *static_cast<const cfg*>(user);
  const int64_t units = (c.n + 3) / 4, pid = kv_mtia_program_id(d), np = kv_mtia_num_programs(d);
  const int64_t i0 = units * pid / np * 4;
  int64_t i1 = units * (pid + 1) / np * 4;
  if (i1 > c.n) i1 = c.n;
  if (i0 >= i1) return;
  const int32_t cb = c.chunk * 8;
  lane ln[2];
  for (int k = 0; k < c.engines; ++k) {
    lane& l = ln[k];
    l.e = c.engines == 2 ? k : FH_ENGINE;
    l.in = kv_mtia_cb_alloc(d, cb, c.slots);
    for (int& w : l.w) w = kv_mtia_cb_alloc(d, cb, 1);
    l.out = kv_mtia_cb_alloc(d, cb, c.slots);
  }
  int64_t chunk_no = 0;
  for (int64_t i = i0; i < i1; i += c.chunk, ++chunk_no) {
    const int n = int(i1 - i < c.chunk ? i1 - i : c.chunk);
    const lane& l = ln[c.engines == 2 && chunk_no % c.vec_every == c.vec_every - 1 ? 1 : 0];
    kv_mtia_dma_in(d, l.in, kv_mtia_rows(c.ids + uint64_t(i) * 8, 1, n * 8, n * 8));
    hash_chunk(d, c, l, n);
    kv_mtia_dma_out(d, kv_mtia_rows(c.out + uint64_t(i) * 8, 1, n * 8, n * 8), l.out, KV_CB_POP);
  }
}

#if KVP_HALVES
// ---- KVP_HALVES: fmix64 and the remainder on 32-bit halves --------------------
// The MLU splits each chunk into its low and high words (two strided copies),
// the engine hashes the halves with 32-bit ops, the MLU interleaves the result
// with its high words again (two packs and a transpose): 24 bytes per id at
// mlu_bytes_per_cycle. In 32-bit passes per id (1/32 cycle on the SE, 1/16 on
// the vector core): salt 1 per non-zero word; k ^= k >> 33 is lo ^= hi >> 1
// (the high word is unchanged), 2; k *= C is lo*Cl and mulhi(lo, Cl) + lo*Ch +
// hi*Cl, 6; the remainder 11 (below), or 1 (AND) for a power-of-two table:
// 30 or 20 passes, where KV_I64 ops take 2 per op and 8 per multiply (60, 32).
// Remainder for 2 <= t < 2^30 from x = hi*2^32 + lo: with A = floor(2^32/t),
// F = floor((2^32 mod t) * 2^32 / t), so that 2^32/t = A + f, F/2^32 <= f <
// (F+1)/2^32, the estimate
//   q = hi*A + mulhi(hi, F) + mulhi(lo, A)
// rounds every term of x/t = hi*A + hi*f + lo/t down: hi*f - mulhi(hi, F) <
// hi/2^32 + 1 < 2, and as 1/t - 1/2^32 < A/2^32 <= 1/t, lo/t - mulhi(lo, A) <
// lo/2^32 + 1 < 2. So Q - 3 <= q <= Q for Q = floor(x/t), and r = x - q*t lies
// in [0, 4t), below 2^32: r equals its low word lo - low(q)*t mod 2^32, for
// which q's low word suffices (hi*A mod 2^32). Subtracting 2t where r >= 2t,
// then t where r >= t leaves x mod t. Tables from 2^30 that are not a power of
// two take the KV_I64 hash above.
struct half_lane {  // the buffers of one engine
  int e, lo, hi, w[5], r, h;
};

// A pool of single-slot work buffers on one engine: every op takes a free
// one for its result, then frees the inputs it pops (never its own output).
struct halves {
  kv_mtia_device* d;
  const half_lane& l;
  int n;
  bool used[5];
  int take() {
    for (int k = 0; k < 5; ++k)
      if (!used[k]) {
        used[k] = true;
        return l.w[k];
      }
    return -1;
  }
  void drop(int cb) {
    for (int k = 0; k < 5; ++k)
      if (l.w[k] == cb) used[k] = false;
  }
  // x op (y, or the immediate when y < 0) into dest, or a pool buffer
  int op(int iop, int x, bool keep_x, int y, uint64_t imm, int dest = -1) {
    const int o = dest >= 0 ? dest : take();
    kv_mtia_int_op(d, l.e, iop, x, keep_x ? KV_CB_KEEP : KV_CB_POP, y, KV_CB_POP, o, n, KV_I32, imm);
    if (!keep_x) drop(x);
    if (y >= 0) drop(y);
    return o;
  }
};

struct half_cfg {
  uint32_t salt_lo, salt_hi, a, f, t, lo_mask, hi_mask;
  int pow2;
};

// Hashes the halves in l.lo / l.hi into l.r (low word) and, for a power-of-two
// table above 2^32, l.h (high word; otherwise the high word is zero).
void hash_halves(kv_mtia_device* d, const half_cfg& h, const half_lane& l, int n) {
  halves p{d, l, n, {false, false, false, false, false}};
  int lo = l.lo, hi = l.hi;
  if (h.salt_lo) lo = p.op(KV_IOP_XOR, lo, false, -1, h.salt_lo);
  if (h.salt_hi) hi = p.op(KV_IOP_XOR, hi, false, -1, h.salt_hi);
  auto xorshift = [&] { lo = p.op(KV_IOP_XOR, lo, false, p.op(KV_IOP_SHR_U, hi, true, -1, 1), 0); };
  auto mul = [&](uint64_t k) {
    const uint32_t kl = uint32_t(k), kh = uint32_t(k >> 32);
    const int low = p.op(KV_IOP_MUL, lo, true, -1, kl), carry = p.op(KV_IOP_MULHI_U, lo, true, -1, kl);
    const int sum = p.op(KV_IOP_ADD, carry, false, p.op(KV_IOP_MUL, lo, false, -1, kh), 0);
    hi = p.op(KV_IOP_ADD, sum, false, p.op(KV_IOP_MUL, hi, false, -1, kl), 0);
    lo = low;
  };
  xorshift();
  mul(0xff51afd7ed558ccdULL);
  xorshift();
  mul(0xc4ceb9fe1a85ec53ULL);
  xorshift();
  if (h.pow2) {
    if (h.hi_mask) p.op(KV_IOP_AND, hi, false, -1, h.hi_mask, l.h);
    else kv_mtia_cb_pop(d, hi);
    p.op(KV_IOP_AND, lo, false, -1, h.lo_mask, l.r);
    return;
  }
  const int ha = p.op(KV_IOP_MUL, hi, true, -1, h.a);  // before the pop of hi below
  const int q1 = p.op(KV_IOP_ADD, ha, false, p.op(KV_IOP_MULHI_U, hi, false, -1, h.f), 0);
  const int q = p.op(KV_IOP_ADD, q1, false, p.op(KV_IOP_MULHI_U, lo, true, -1, h.a), 0);
  int r = p.op(KV_IOP_SUB, lo, false, p.op(KV_IOP_MUL, q, false, -1, h.t), 0);
  r = p.op(KV_IOP_ADD_IF, r, false, p.op(KV_IOP_GE_U, r, true, -1, 2 * h.t), uint32_t(0 - 2 * h.t));
  p.op(KV_IOP_ADD_IF, r, false, p.op(KV_IOP_GE_U, r, true, -1, h.t), uint32_t(0 - h.t), l.r);
}

// The MLU splits chunks this far ahead of the hash. Its queue is in order and
// the join of a chunk waits for that chunk's hash (on the vector core, twice
// as long as on the SE), so splits close behind it would starve the other
// engine: three chunks ahead keep both hashing.
constexpr int kAhead = 3;

struct hcfg {
  cfg base;
  half_cfg h;
};

void program_halves(kv_mtia_device* d, const void* user) {
  const hcfg& hc = *static_cast<const hcfg*>(user);
  const cfg& c = hc.base;
  const int64_t units = (c.n + 3) / 4, pid = kv_mtia_program_id(d), np = kv_mtia_num_programs(d);
  const int64_t i0 = units * pid / np * 4;
  int64_t i1 = units * (pid + 1) / np * 4;
  if (i1 > c.n) i1 = c.n;
  if (i0 >= i1) return;
  const int32_t cb = c.chunk * 8, hb = c.chunk * 4;
  const int in = kv_mtia_cb_alloc(d, cb, c.slots), pair = kv_mtia_cb_alloc(d, cb, 2);
  const int out = kv_mtia_cb_alloc(d, cb, c.slots);
  int zero = -1;
  if (!hc.h.hi_mask) {
    zero = kv_mtia_cb_alloc(d, hb, 1);
    kv_mtia_se_fill(d, zero, 1, c.chunk, KV_F32, 0.0f);  // 0.0f: all bits zero
  }
  half_lane ln[2];
  for (int k = 0; k < c.engines; ++k) {
    half_lane& l = ln[k];
    l.e = c.engines == 2 ? k : FH_ENGINE;
    l.lo = kv_mtia_cb_alloc(d, hb, kAhead + 1);
    l.hi = kv_mtia_cb_alloc(d, hb, kAhead + 1);
    for (int& w : l.w) w = kv_mtia_cb_alloc(d, hb, 1);
    l.r = kv_mtia_cb_alloc(d, hb, 2);
    l.h = hc.h.hi_mask ? kv_mtia_cb_alloc(d, hb, 2) : -1;
  }
  const int64_t chunks = (i1 - i0 + c.chunk - 1) / c.chunk;
  auto len = [&](int64_t k) { return int(i1 - i0 - k * c.chunk < c.chunk ? i1 - i0 - k * c.chunk : c.chunk); };
  auto lane_of = [&](int64_t k) -> const half_lane& {
    return ln[c.engines == 2 && k % c.vec_every == c.vec_every - 1 ? 1 : 0];
  };
  auto split = [&](int64_t k) {  // DMA chunk k in, its low and high words to its engine
    if (k >= chunks) return;
    const int n = len(k);
    kv_mtia_dma_in(d, in, kv_mtia_rows(c.ids + uint64_t(i0 + k * c.chunk) * 8, 1, n * 8, n * 8));
    kv_mtia_mlu_copy(d, in, KV_CB_KEEP, 0, n, 4, 8, lane_of(k).lo);
    kv_mtia_mlu_copy(d, in, KV_CB_POP, 4, n, 4, 8, lane_of(k).hi);
  };
  for (int k = 0; k < kAhead; ++k) split(k);
  for (int64_t k = 0; k < chunks; ++k) {
    split(k + kAhead);
    const half_lane& l = lane_of(k);
    const int n = len(k);
    hash_halves(d, hc.h, l, n);
    kv_mtia_mlu_pack(d, l.r, KV_CB_POP, 1, n, n, 4, pair, 0, 2);
    kv_mtia_mlu_pack(d, zero >= 0 ? zero : l.h, zero >= 0 ? KV_CB_KEEP : KV_CB_POP, 1, n, n, 4, pair, 1, 2);
    kv_mtia_mlu_transpose(d, pair, KV_CB_POP, 2, n, 4, out);
    kv_mtia_dma_out(d, kv_mtia_rows(c.out + uint64_t(i0 + k * c.chunk) * 8, 1, n * 8, n * 8), out, KV_CB_POP);
  }
}

// Launches the halves kernel when the table allows it (a power of two, or
// below 2^30); returns -1 for the KV_I64 hash.
int run_halves(kv_mtia_device* dev, cfg c, int32_t pes) {
  hcfg hc;
  half_cfg& h = hc.h;
  if (!c.pow2 && c.table >= (uint64_t(1) << 30)) return -1;
  h.salt_lo = uint32_t(c.salt);
  h.salt_hi = uint32_t(c.salt >> 32);
  h.pow2 = c.pow2;
  h.lo_mask = uint32_t(c.table - 1);
  h.hi_mask = uint32_t((c.table - 1) >> 32);
  h.t = uint32_t(c.table);
  h.a = c.pow2 ? 0 : uint32_t((uint64_t(1) << 32) / c.table);
  h.f = c.pow2 ? 0 : uint32_t(((uint64_t(1) << 32) % c.table << 32) / c.table);
  // Local memory per id: in, out (slots each), pair (2) of 8 bytes, zero, and
  // per engine low and high words (kAhead + 1 each), 5 work buffers and r, h
  // (2 each) of 4 bytes. Smaller chunks first: the split-ahead needs the slots.
  const int64_t budget = kv_mtia_query(dev, KV_MTIA_Q_LS_BYTES) - 8192;
  int64_t chunk = c.chunk;
  const int64_t slots = c.slots;
  while (chunk * (8 * (2 * slots + 2) + 4 + 4 * c.engines * (2 * (kAhead + 1) + 9)) > budget && chunk > 64) chunk /= 2;
  c.chunk = int32_t(chunk);
  hc.base = c;
  return kv_mtia_launch(dev, pes, program_halves, &hc);
}
#endif

}  // namespace

extern "C" int kevolve_kernel(const kv_args* a, kv_mtia_device* dev) {
  cfg c;
  c.ids = kv_mtia_addr(&a->inputs[0]);
  c.out = kv_mtia_addr(&a->outputs[0]);
  c.n = kv_numel(&a->inputs[0]);
  const int64_t table = kv_param_i(a, 0);
  if (table < 1) return KV_ERR_UNSUPPORTED;
  c.table = uint64_t(table);
  c.salt = uint64_t(kv_param_i(a, 1));
  c.magic = ~uint64_t(0) / c.table;
  c.pow2 = (c.table & (c.table - 1)) == 0;
  c.engines = FH_ENGINES;
  c.vec_every = KVP_VEC_EVERY;
  const int32_t pes = kv_mtia_grid_rows(dev) * kv_mtia_grid_cols(dev);
  int64_t chunk = int64_t(KVP_CHUNK_KB) * 1024 / 8;
  const int64_t per_pe = (c.n + pes - 1) / pes;
  if (chunk > per_pe) chunk = (per_pe + 3) / 4 * 4;  // one chunk covers a program's range
  // Local memory per engine: in and out (slots each) and three work buffers.
  const int64_t budget = (kv_mtia_query(dev, KV_MTIA_Q_LS_BYTES) - 8192) / c.engines;
  int64_t slots = KVP_SLOTS;
  while ((2 * slots + 3) * chunk * 8 > budget && (slots > 1 || chunk > 64)) {
    if (slots > 1) --slots;
    else chunk /= 2;
  }
  c.chunk = int32_t(chunk);
  c.slots = int32_t(slots);
#if KVP_HALVES
  {
    cfg h = c;
    h.chunk = int32_t(int64_t(KVP_CHUNK_KB) * 1024 / 8 < (per_pe + 3) / 4 * 4 ? int64_t(KVP_CHUNK_KB) * 1024 / 8
                                                                              : (per_pe + 3) / 4 * 4);
    h.slots = KVP_SLOTS;
    const int r = run_halves(dev, h, pes);
    if (r >= 0) return r;
  }
#endif
  return kv_mtia_launch(dev, pes, program, &c);
}
