// The mtia_emu baseline of feature_hash: what a compiler would emit without double
// buffering (one CB slot per DMA stage) or strength reduction (% on the divider),
// all on the SE. Generated from knowledge/templates/mtia_emu/feature_hash.cpp.tmpl
// with the parameters below.
#define KVP_SLOTS 1
#define KVP_CHUNK_KB 16
#define KVP_MOD_REM 1
#define KVP_HALVES 0
#define KVP_ENGINE_SE 1
#define KVP_VEC_EVERY 3
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
// vector core, so both engines hash).
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
  return kv_mtia_launch(dev, pes, program, &c);
}
