// The mtia_emu baseline of bucketize: what a compiler would emit without double
// buffering (one CB slot per DMA stage, so DMA and the search never overlap), the
// search on the SE alone. Generated from knowledge/templates/mtia_emu/bucketize.cpp.tmpl
// with the parameters below.
#define KVP_SLOTS 1
#define KVP_CHUNK_KB 16
#define KVP_ENGINE_SE 1
#define KVP_VEC_EVERY 4
#define KVP_INDEX 0
#define KVP_PIPE 0
#define KVP_CELLS 8
// kevolve mtia_emu template: bucketize (lower_bound count) as a branch-free
// binary search on the SE / vector core with the boundaries in local memory.
// Each program owns a contiguous range of x (cut at 8 elements so every DMA
// is 32-byte aligned) and streams it in chunks of ~KVP_CHUNK_KB KiB. Per
// chunk, with the table in local memory (one copy per engine used):
//   pos = 0; for half in the fixed schedule of NB (n -= half each step):
//     g = table[pos + half] (kv_mtia_lm_gather); m = g < x; pos += m ? half : 0
//   final: g = table[pos]; pos += g < x
// Every level is three commands on one engine. KVP_ENGINE_*: se (fastest
// gather), vec, or split (every KVP_VEC_EVERY-th chunk on the vector core so
// both engines work). KVP_SLOTS CB slots on the DMA stages: 1 serialises DMA
// and the search, 2+ overlaps them. Boundaries that do not fit local memory
// are searched in blocks whose counts are added.
#include <stdint.h>

#include <kevolve/abi.h>
#include <kevolve/mtia.h>

#if defined(KVP_ENGINE_VEC)
#define BK_ENGINE 1
#else
#define BK_ENGINE 0
#endif
#if defined(KVP_ENGINE_SPLIT)
#define BK_ENGINES 2
#else
#define BK_ENGINES 1
#endif

namespace {

struct cfg {
  uint64_t x, bnd, out;
  int64_t n, nb, block, nblocks;  // block: boundaries per table (multiple of 8 unless one block)
  int32_t chunk, slots, engines, vec_every;
};

struct lane {  // the buffers of one engine
  int e, tab, x, pa, pb, g, m, part, ta, tb, out;
};

// count of table[0..nbk) < x for n elements of the x slot (kept), into dest.
void search(kv_mtia_device* d, const lane& l, int nbk, int n, uint32_t tab_flags, bool last_x_use, int dest) {
  int cur = l.pa, other = l.pb;
  kv_mtia_int_op(d, l.e, KV_IOP_AND, l.x, KV_CB_KEEP, -1, 0, cur, n, KV_I32, 0);  // pos = 0
  for (int len = nbk; len > 1; len -= len / 2) {
    const int half = len / 2;
    kv_mtia_lm_gather(d, l.e, l.tab, KV_CB_KEEP, nbk, KV_F32, cur, KV_CB_KEEP, l.g, n, half);
    kv_mtia_cmp(d, l.e, KV_CMP_LT, l.g, KV_CB_POP, l.x, KV_CB_KEEP, l.m, n, KV_F32);
    kv_mtia_int_op(d, l.e, KV_IOP_ADD_IF, cur, KV_CB_POP, l.m, KV_CB_POP, other, n, KV_I32, uint64_t(half));
    const int t = cur;
    cur = other;
    other = t;
  }
  kv_mtia_lm_gather(d, l.e, l.tab, tab_flags, nbk, KV_F32, cur, KV_CB_KEEP, l.g, n, 0);
  kv_mtia_cmp(d, l.e, KV_CMP_LT, l.g, KV_CB_POP, l.x, last_x_use ? KV_CB_POP : KV_CB_KEEP, l.m, n, KV_F32);
  kv_mtia_int_op(d, l.e, KV_IOP_ADD_IF, cur, KV_CB_POP, l.m, KV_CB_POP, dest, n, KV_I32, 1);
}

void program(kv_mtia_device* d, const void* user) {
  const cfg& c = *static_cast<const cfg*>(user);
  const int64_t units = (c.n + 7) / 8, pid = kv_mtia_program_id(d), np = kv_mtia_num_programs(d);
  const int64_t i0 = units * pid / np * 8;
  int64_t i1 = units * (pid + 1) / np * 8;
  if (i1 > c.n) i1 = c.n;
  if (i0 >= i1) return;
  const int32_t cb = c.chunk * 4;
  lane ln[2];
  for (int k = 0; k < c.engines; ++k) {
    lane& l = ln[k];
    l.e = c.engines == 2 ? k : BK_ENGINE;
    l.tab = kv_mtia_cb_alloc(d, int32_t(c.block * 4), 1);
    l.x = kv_mtia_cb_alloc(d, cb, c.slots);
    l.pa = kv_mtia_cb_alloc(d, cb, 1);
    l.pb = kv_mtia_cb_alloc(d, cb, 1);
    l.g = kv_mtia_cb_alloc(d, cb, 1);
    l.m = kv_mtia_cb_alloc(d, cb, 1);
    l.part = l.ta = l.tb = -1;
    if (c.nblocks > 1) {
      l.part = kv_mtia_cb_alloc(d, cb, 1);
      l.ta = kv_mtia_cb_alloc(d, cb, 1);
      l.tb = kv_mtia_cb_alloc(d, cb, 1);
    }
    l.out = kv_mtia_cb_alloc(d, cb, c.slots);
    if (c.nblocks == 1) kv_mtia_dma_in(d, l.tab, kv_mtia_rows(c.bnd, 1, c.nb * 4, c.nb * 4));
  }
  int64_t chunk_no = 0;
  for (int64_t i = i0; i < i1; i += c.chunk, ++chunk_no) {
    const int n = int(i1 - i < c.chunk ? i1 - i : c.chunk);
    const lane& l = ln[c.engines == 2 && c.vec_every > 0 && chunk_no % c.vec_every == c.vec_every - 1 ? 1 : 0];
    kv_mtia_dma_in(d, l.x, kv_mtia_rows(c.x + uint64_t(i) * 4, 1, n * 4, n * 4));
    if (c.nblocks == 1) {
      search(d, l, int(c.nb), n, KV_CB_KEEP, true, l.out);
    } else {
      int tot = l.ta, spare = l.tb;
      for (int64_t b = 0; b < c.nblocks; ++b) {
        const int64_t nbk = c.nb - b * c.block < c.block ? c.nb - b * c.block : c.block;
        const uint64_t src = c.bnd + uint64_t(b * c.block) * 4;
        kv_mtia_dma_in(d, l.tab, kv_mtia_rows(src, 1, nbk * 4, nbk * 4));
        const bool last = b == c.nblocks - 1;
        search(d, l, int(nbk), n, KV_CB_POP, last, b == 0 ? tot : l.part);
        if (b == 0) continue;
        kv_mtia_int_op(d, l.e, KV_IOP_ADD, tot, KV_CB_POP, l.part, KV_CB_POP, last ? l.out : spare, n, KV_I32, 0);
        const int t = tot;
        tot = spare;
        spare = t;
      }
    }
    kv_mtia_dma_out(d, kv_mtia_rows(c.out + uint64_t(i) * 4, 1, n * 4, n * 4), l.out, KV_CB_POP);
  }
}

}  // namespace

extern "C" int kevolve_kernel(const kv_args* a, kv_mtia_device* dev) {
  cfg c;
  c.x = kv_mtia_addr(&a->inputs[0]);
  c.bnd = kv_mtia_addr(&a->inputs[1]);
  c.out = kv_mtia_addr(&a->outputs[0]);
  c.n = kv_numel(&a->inputs[0]);
  c.nb = kv_numel(&a->inputs[1]);
  c.engines = BK_ENGINES;
  c.vec_every = KVP_VEC_EVERY;
  const int32_t pes = kv_mtia_grid_rows(dev) * kv_mtia_grid_cols(dev);
  int64_t chunk = int64_t(KVP_CHUNK_KB) * 1024 / 4;
  const int64_t per_pe = (c.n + pes - 1) / pes;
  if (chunk > per_pe) chunk = (per_pe + 7) / 8 * 8;  // one chunk covers a program's range
  // Local memory per engine: x and out (slots each), 4 work buffers (+3 when
  // the boundaries come in blocks) and the table.
  const int64_t budget = (kv_mtia_query(dev, KV_MTIA_Q_LS_BYTES) - 8192) / c.engines;
  int64_t slots = KVP_SLOTS;
  while ((2 * slots + 7) * chunk * 4 > budget / 2 && (slots > 1 || chunk > 256)) {
    if (slots > 1) --slots;
    else chunk /= 2;
  }
  const int64_t fixed = (2 * slots + 7) * chunk * 4;
  c.chunk = int32_t(chunk);
  c.slots = int32_t(slots);
  if (c.nb * 4 + fixed - 3 * chunk * 4 <= budget) {
    c.block = c.nb;
    c.nblocks = 1;
  } else {
    c.block = (budget - fixed) / 4 / 8 * 8;
    c.nblocks = (c.nb + c.block - 1) / c.block;
  }
  return kv_mtia_launch(dev, pes, program, &c);
}
