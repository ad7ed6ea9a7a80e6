#include "emu/mtia/device.h"

#include <algorithm>

namespace kevolve::emu::mtia {

namespace {

device* impl(kv_mtia_device* d) { return static_cast<device*>(d->impl); }

// The C function table: thin thunks onto the device's methods.
int t_launch(kv_mtia_device* d, int32_t n, kv_mtia_program_fn fn, const void* u) { return impl(d)->launch(n, fn, u); }
int32_t t_query(kv_mtia_device* d, int32_t w) { return impl(d)->query(w); }
int t_cb_alloc(kv_mtia_device* d, int32_t s, int32_t n) { return impl(d)->cb_alloc(s, n); }
int t_cb_pop(kv_mtia_device* d, int32_t cb) { return impl(d)->cb_pop(cb); }
int t_loop(kv_mtia_device* d, int32_t n) { return impl(d)->issue_loop(n); }
int t_barrier(kv_mtia_device* d) { return impl(d)->barrier(); }
int t_dma_in(kv_mtia_device* d, int32_t cb, const kv_mtia_view* v, int32_t b) {
  return v ? impl(d)->dma_in(cb, *v, b != 0) : KV_MTIA_ERR_ARG;
}
int t_dma_out(kv_mtia_device* d, const kv_mtia_view* v, int32_t cb, uint32_t f) {
  return v ? impl(d)->dma_out(*v, cb, f) : KV_MTIA_ERR_ARG;
}
int t_gather(kv_mtia_device* d, int32_t cb, uint64_t t, int64_t tr, int64_t rb, int64_t rs, int32_t icb, int32_t n,
             int32_t idt, uint32_t f) {
  return impl(d)->dma_gather(cb, t, tr, rb, rs, icb, n, idt, f);
}
int t_acc(kv_mtia_device* d, int32_t r, int32_t c) { return impl(d)->acc_alloc(r, c); }
int t_load_b(kv_mtia_device* d, int32_t cb, int32_t k, int32_t n, int32_t dt, uint32_t f) {
  return impl(d)->dpe_load_b(cb, k, n, dt, f);
}
int t_mm(kv_mtia_device* d, int32_t cb, int32_t m, int32_t k, int32_t lda, int32_t acc, uint32_t f) {
  return impl(d)->dpe_mm(cb, m, k, lda, acc, f);
}
int t_drain(kv_mtia_device* d, int32_t acc, int32_t cb, int32_t dt, int32_t op, int32_t bias, uint32_t bf) {
  return impl(d)->re_drain(acc, cb, dt, op, bias, bf);
}
int t_send(kv_mtia_device* d, int32_t acc, int32_t dir) { return impl(d)->re_send(acc, dir); }
int t_recv(kv_mtia_device* d, int32_t acc, int32_t dir, int32_t add) { return impl(d)->re_recv(acc, dir, add); }
int t_minmax(kv_mtia_device* d, int32_t acc, int32_t cb) { return impl(d)->re_minmax(acc, cb); }
int t_elem(kv_mtia_device* d, int32_t v, int32_t op, int32_t x, uint32_t xf, int32_t y, uint32_t yf, int32_t yb,
           int32_t o, int32_t r, int32_t c, int32_t idt, int32_t odt, float a, float b) {
  return impl(d)->elementwise(v != 0, op, x, xf, y, yf, yb, o, r, c, idt, odt, a, b);
}
int t_row_accum(kv_mtia_device* d, int32_t in, uint32_t f, int32_t r, int32_t c, int32_t idt, int32_t o, int32_t odt) {
  return impl(d)->se_row_accum(in, f, r, c, idt, o, odt);
}
int t_transpose(kv_mtia_device* d, int32_t in, uint32_t f, int32_t r, int32_t c, int32_t eb, int32_t o) {
  return impl(d)->mlu_transpose(in, f, r, c, eb, o);
}
int t_copy(kv_mtia_device* d, int32_t in, uint32_t f, int32_t off, int32_t r, int32_t rb, int32_t st, int32_t o) {
  return impl(d)->mlu_copy(in, f, off, r, rb, st, o);
}
int t_concat(kv_mtia_device* d, int32_t a, int32_t b, uint32_t f, int32_t r, int32_t arb, int32_t brb, int32_t o) {
  return impl(d)->mlu_concat(a, b, f, r, arb, brb, o);
}
int t_peek(kv_mtia_device* d, int32_t cb, int32_t dt, int64_t i, uint32_t f, int64_t* v) {
  return v ? impl(d)->sc_peek_int(cb, dt, i, f, v) : KV_MTIA_ERR_ARG;
}
int t_push(kv_mtia_device* d, int32_t cb, int32_t dt, const int64_t* v, int32_t n) {
  return v ? impl(d)->sc_push_int(cb, dt, v, n) : KV_MTIA_ERR_ARG;
}
int t_fill(kv_mtia_device* d, int32_t o, int32_t r, int32_t c, int32_t dt, float v) {
  return impl(d)->se_fill(o, r, c, dt, v);
}
int t_seg_sum(kv_mtia_device* d, int32_t in, uint32_t f, int32_t r, int32_t c, int32_t idt, int64_t base,
              const kv_mtia_segments* s, int32_t acc, uint32_t af) {
  return s ? impl(d)->re_segment_sum(in, f, r, c, idt, base, *s, acc, af) : KV_MTIA_ERR_ARG;
}

int t_int_op(kv_mtia_device* d, int32_t v, int32_t op, int32_t x, uint32_t xf, int32_t y, uint32_t yf, int32_t o,
             int32_t n, int32_t dt, uint64_t imm) {
  return impl(d)->int_op(v != 0, op, x, xf, y, yf, o, n, dt, imm);
}
int t_cmp(kv_mtia_device* d, int32_t v, int32_t c, int32_t x, uint32_t xf, int32_t y, uint32_t yf, int32_t o, int32_t n,
          int32_t dt) {
  return impl(d)->cmp(v != 0, c, x, xf, y, yf, o, n, dt);
}
int t_lm_gather(kv_mtia_device* d, int32_t v, int32_t t, uint32_t tf, int32_t te, int32_t dt, int32_t i, uint32_t idf,
                int32_t o, int32_t n, int32_t off) {
  return impl(d)->lm_gather(v != 0, t, tf, te, dt, i, idf, o, n, off);
}
int t_cvt_f2i(kv_mtia_device* d, int32_t v, int32_t x, uint32_t xf, int32_t o, int32_t n, int32_t dt, float a, float b,
              int32_t lo, int32_t hi) {
  return impl(d)->cvt_f2i(v != 0, x, xf, o, n, dt, a, b, lo, hi);
}
int t_pack(kv_mtia_device* d, int32_t i, uint32_t f, int32_t r, int32_t c, int32_t ld, int32_t eb, int32_t lower,
           int32_t o, int32_t part, int32_t parts) {
  return impl(d)->mlu_pack(i, f, r, c, ld, eb, lower, o, part, parts);
}

}  // namespace

device::device(params p) : p_(std::move(p)) {
  mem_.configure(p_.dram_bytes, p_.sram_bytes);
  pes_.resize(static_cast<std::size_t>(p_.pes()));
  for (int i = 0; i < p_.pes(); ++i) {
    pes_[i].id = i;
    pes_[i].row = i / static_cast<int>(p_.pe_cols);
    pes_[i].col = i % static_cast<int>(p_.pe_cols);
    fibers_.push_back(std::make_unique<fiber>());
  }
  api_ = kv_mtia_api{KV_MTIA_API_VERSION, sizeof(kv_mtia_api), t_launch, t_query, t_cb_alloc, t_cb_pop, t_loop,
                     t_barrier, t_dma_in, t_dma_out, t_gather, t_acc, t_load_b, t_mm, t_drain, t_send, t_recv,
                     t_minmax, t_elem, t_row_accum, t_transpose, t_copy, t_concat, t_int_op, t_cmp, t_lm_gather,
                     t_peek, t_push, t_fill, t_seg_sum, t_cvt_f2i, t_pack};
  handle_.api = &api_;
  handle_.impl = this;
  const std::string bad = validate(p_);
  if (!bad.empty()) fail(KV_MTIA_ERR_ARG, "invalid profile " + p_.name + ": " + bad);
}

uint64_t device::alloc(level where, uint64_t bytes, std::string* error) { return mem_.alloc(where, bytes, error); }

void device::begin_run() {
  const std::string bad = validate(p_);
  result_ = run_result{};
  if (!bad.empty()) fail(KV_MTIA_ERR_ARG, "invalid profile " + p_.name + ": " + bad);
}

run_result device::end_run() {
  run_result r = result_;
  r.finish(p_);
  return r;
}

int device::fail(int status, const std::string& what) {
  if (result_.status == 0) {
    result_.status = status;
    result_.message = what;
  }
  return status;
}

pe_state* device::no_current_pe(const char* intrinsic) {
  if (failed()) return nullptr;
  fail(KV_MTIA_ERR_STATE, std::string(intrinsic) + ": called outside a program (use kv_mtia_launch)");
  return nullptr;
}

int32_t device::query(int32_t what) {
  switch (what) {
    case KV_MTIA_Q_GRID_ROWS: return static_cast<int32_t>(p_.pe_rows);
    case KV_MTIA_Q_GRID_COLS: return static_cast<int32_t>(p_.pe_cols);
    case KV_MTIA_Q_LS_BYTES: return static_cast<int32_t>(p_.ls_bytes);
    case KV_MTIA_Q_ALIGN: return static_cast<int32_t>(p_.dma_align_bytes);
    case KV_MTIA_Q_ACC_BYTES: return static_cast<int32_t>(p_.re_acc_bytes);
    case KV_MTIA_Q_NUM_PROGRAMS: return num_programs_;
    default: break;
  }
  if (current_ < 0) return -KV_MTIA_ERR_STATE;
  const pe_state& pe = pes_[current_];
  switch (what) {
    case KV_MTIA_Q_PROGRAM_ID: return pe.program;
    case KV_MTIA_Q_PE_ROW: return pe.row;
    case KV_MTIA_Q_PE_COL: return pe.col;
    default: return -KV_MTIA_ERR_ARG;
  }
}

int device::cb_alloc(int32_t slot_bytes, int32_t n_slots) {
  pe_state* pe = current_pe("kv_mtia_cb_alloc");
  if (!pe) return -result_.status;
  const std::string where = "pe " + std::to_string(pe->id) + " (program " + std::to_string(pe->program) + ")";
  if (slot_bytes <= 0 || n_slots <= 0 || n_slots > p_.max_cb_slots)
    return -fail(KV_MTIA_ERR_ARG, where + ": kv_mtia_cb_alloc: slot_bytes must be positive and n_slots in 1.." +
                                      std::to_string(static_cast<int>(p_.max_cb_slots)));
  if (pe->cbs.size() >= p_.max_cbs)
    return -fail(KV_MTIA_ERR_LIMIT, where + ": kv_mtia_cb_alloc: more than " +
                                        std::to_string(static_cast<int>(p_.max_cbs)) + " circular buffers");
  const uint64_t charged = (uint64_t(slot_bytes) * n_slots + 63) & ~uint64_t(63);
  if (pe->ls_used + charged > p_.ls_bytes)
    return -fail(KV_MTIA_ERR_CAPACITY, where + ": local memory overflow: circular buffers need " +
                                           std::to_string(pe->ls_used + charged) + " bytes, local memory is " +
                                           std::to_string(static_cast<uint64_t>(p_.ls_bytes)) + " bytes");
  pe->ls_used += charged;
  cb_state cb;
  cb.slot_bytes = slot_bytes;
  cb.ring.init(n_slots, 2 * n_slots + 2);
  cb.offset = pe->store_used;
  if (functional_) {  // timing-only runs keep no data
    pe->store_used += uint64_t(slot_bytes) * cb.ring.depth;
    if (pe->store.size() < pe->store_used) pe->store.resize(pe->store_used);
  }
  pe->cbs.push_back(std::move(cb));
  return static_cast<int>(pe->cbs.size() - 1);
}

}  // namespace kevolve::emu::mtia
