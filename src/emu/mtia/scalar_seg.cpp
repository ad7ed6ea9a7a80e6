// Intrinsics of the gather/segment class: scalar-core peeks and pushes on
// local memory (data-dependent control flow), the SE constant fill and the
// RE's segmented row-accumulate (embedding bags). The padded, unaligned
// indexed gather they pair with lives in dma.cpp.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "emu/mtia/device.h"
#include "emu/mtia/numerics.h"

namespace kevolve::emu::mtia {

namespace {
std::string at(const pe_state& pe, const char* what) { return "pe " + std::to_string(pe.id) + ": " + what + ": "; }
bool same(const cmd_ref& a, const cmd_ref& b) { return a.pe == b.pe && a.idx == b.idx; }
int int_bytes(int32_t dtype) { return dtype == KV_I32 ? 4 : dtype == KV_I64 ? 8 : 0; }

int64_t load_int(const uint8_t* base, int isz, int64_t i) {
  if (isz == 4) return load_i(base, i);
  int64_t v;
  std::memcpy(&v, base + 8 * i, 8);
  return v;
}
}  // namespace

int device::need_functional(const char* what) {
  result_.data_dependent = true;
  if (functional_) return KV_MTIA_OK;
  result_.needs_functional = true;
  return fail(KV_MTIA_ERR_STATE, std::string(what) + ": the kernel's commands depend on data it reads; a timing-only "
                                                     "run cannot replay it (run it with arithmetic)");
}

command* device::record_scalar(pe_state& pe, uint8_t op, double work) {
  if (++launch_commands_ > max_commands_per_launch) {
    fail(KV_MTIA_ERR_LIMIT, "launch records more than " + std::to_string(max_commands_per_launch) + " commands");
    return nullptr;
  }
  pe.trace.emplace_back();
  pe.pre.open = false;
  command& c = pe.trace.back();
  c.op = op;
  c.eng = scalar_core;
  c.kind = cmd_kind::scalar;
  c.work = work;
  return &c;
}

int device::sc_peek_int(int32_t id, int32_t dtype, int64_t index, uint32_t flags, int64_t* value) {
  const char* what = "kv_mtia_sc_peek_int";
  *value = 0;  // a failed peek reads 0, so loops bounded by peeked values end
  pe_state* pe = current_pe(what);
  if (!pe || need_functional(what)) return result_.status;
  const int isz = int_bytes(dtype);
  if (!isz) return fail(KV_MTIA_ERR_ARG, at(*pe, what) + "dtype must be KV_I32 or KV_I64");
  cb_state* cb = check_cb(*pe, id, what);
  if (!cb) return result_.status;
  slot_ring& r = cb->ring;
  const std::string where = at(*pe, what) + "cb " + std::to_string(id);
  if (r.empty()) return fail(KV_MTIA_ERR_DEADLOCK, where + " is empty: nothing was pushed to it earlier in program order");
  const int64_t v = r.pops % r.depth;
  if (index < 0 || (index + 1) * isz > r.filled[v])
    return fail(KV_MTIA_ERR_ARG, where + ": element " + std::to_string(index) + " is outside the " +
                                     std::to_string(r.filled[v]) + " bytes its producer wrote to the front slot");
  const bool pop = !(flags & KV_CB_KEEP);
  if (pop) {
    if (cb->consumer == no_engine) cb->consumer = scalar_core;
    if (cb->consumer != scalar_core)
      return fail(KV_MTIA_ERR_ARG, where + " is consumed by " + engine_name(cb->consumer) +
                                       ": peek it with KV_CB_KEEP and let that engine pop it");
  }
  const cmd_ref producer = r.prod[v];
  command* last = pe->trace.empty() ? nullptr : &pe->trace.back();
  uint32_t idx;
  if (last && last->kind == cmd_kind::scalar && last->op == op_sc_peek && same(last->dep[dep_in0], producer)) {
    last->work += p_.sc_load_cycles;  // another load from a slot the scalar core already waited for
    idx = static_cast<uint32_t>(pe->trace.size() - 1);
  } else {
    command* c = record_scalar(*pe, op_sc_peek, p_.sc_load_cycles);
    if (!c) return result_.status;
    c->dep[dep_in0] = producer;
    idx = static_cast<uint32_t>(pe->trace.size() - 1);
  }
  *value = load_int(pe->store.data() + cb->offset + uint64_t(v) * cb->slot_bytes, isz, index);
  if (pop) ring_pop(r, cmd_ref{static_cast<uint32_t>(pe->id), idx});
  return KV_MTIA_OK;
}

int device::sc_push_int(int32_t id, int32_t dtype, const int64_t* values, int32_t n) {
  const char* what = "kv_mtia_sc_push_int";
  pe_state* pe = current_pe(what);
  if (!pe) return result_.status;
  const int isz = int_bytes(dtype);
  if (!isz || n < 1) return fail(KV_MTIA_ERR_ARG, at(*pe, what) + "needs dtype KV_I32 or KV_I64 and n >= 1");
  command* c = record_scalar(*pe, op_sc_push, double(n) * p_.sc_store_cycles);
  if (!c) return result_.status;
  const uint32_t idx = static_cast<uint32_t>(pe->trace.size() - 1);
  uint8_t* dst = cb_write(*pe, id, scalar_core, int64_t(n) * isz, idx, what);
  if (failed() || !dst) return result_.status;
  for (int32_t i = 0; i < n; ++i) {
    if (isz == 8) {
      std::memcpy(dst + 8 * i, &values[i], 8);
    } else if (values[i] < INT32_MIN || values[i] > INT32_MAX) {
      return fail(KV_MTIA_ERR_ARG, at(*pe, what) + "value " + std::to_string(values[i]) + " at " + std::to_string(i) +
                                       " does not fit KV_I32");
    } else {
      store_i(dst, i, static_cast<int32_t>(values[i]));
    }
  }
  return KV_MTIA_OK;
}

int device::se_fill(int32_t cb_out, int32_t rows, int32_t cols, int32_t dtype, float value) {
  const char* what = "kv_mtia_se_fill";
  pe_state* pe = current_pe(what);
  if (!pe) return result_.status;
  if (rows < 1 || cols < 1 || !is_float(dtype))
    return fail(KV_MTIA_ERR_ARG, at(*pe, what) + "needs rows, cols >= 1 and dtype f32, f16 or bf16");
  const int64_t n = int64_t(rows) * cols;
  if (!record(*pe, op_fill, se, std::ceil(double(n) / p_.se_elems_per_cycle))) return result_.status;
  const uint32_t idx = static_cast<uint32_t>(pe->trace.size() - 1);
  uint8_t* o = cb_write(*pe, cb_out, se, n * elem_bytes(dtype), idx, what);
  if (failed() || !o) return result_.status;
  for (int64_t i = 0; i < n; ++i) store_f(o, dtype, i, value);
  return KV_MTIA_OK;
}

int device::re_segment_sum(int32_t cb_rows, uint32_t rows_flags, int32_t rows, int32_t cols, int32_t in_dtype,
                           int64_t row_base, const kv_mtia_segments& seg, int32_t acc, uint32_t acc_flags) {
  const char* what = "kv_mtia_re_segment_sum";
  pe_state* pe = current_pe(what);
  if (!pe) return result_.status;
  const int bsz = int_bytes(seg.dtype);
  if (rows < 1 || cols < 1 || !is_float(in_dtype) || !bsz || seg.count < 1 || seg.first < 0 || row_base < 0)
    return fail(KV_MTIA_ERR_ARG, at(*pe, what) + "needs rows, cols, seg.count >= 1, seg.first, row_base >= 0, a float "
                                                 "in_dtype and KV_I32 or KV_I64 boundaries");
  acc_state* a = check_acc(*pe, acc, what);
  if (!a) return result_.status;
  if (a->cols != cols || a->rows < seg.count)
    return fail(KV_MTIA_ERR_ARG, at(*pe, what) + "accumulator " + std::to_string(acc) + " is " +
                                     std::to_string(a->rows) + " x " + std::to_string(a->cols) + ", needs >= " +
                                     std::to_string(seg.count) + " rows of " + std::to_string(cols));
  // The boundaries must lie in bytes the slot's producer wrote.
  cb_state* sb = check_cb(*pe, seg.cb, what);
  if (!sb) return result_.status;
  const int64_t nb = int64_t(seg.first) + seg.count + 1;
  if (!sb->ring.empty() && nb * bsz > sb->ring.filled[sb->ring.pops % sb->ring.depth])
    return fail(KV_MTIA_ERR_ARG, at(*pe, what) + "boundaries " + std::to_string(seg.first) + ".." +
                                     std::to_string(nb - 1) + " lie outside the bytes written to cb " +
                                     std::to_string(seg.cb) + "'s front slot");
  const double work = std::ceil(double(rows) * cols * 4 / p_.re_bytes_per_cycle) + seg.count * p_.re_segment_cycles;
  if (!record(*pe, op_seg_sum, re, work)) return result_.status;
  const uint32_t idx = static_cast<uint32_t>(pe->trace.size() - 1);
  const uint8_t* x = cb_read(*pe, cb_rows, re, int64_t(rows) * cols * elem_bytes(in_dtype), rows_flags, idx, dep_in0, what);
  if (failed()) return result_.status;
  const uint8_t* b = cb_read(*pe, seg.cb, re, nb * bsz, seg.flags, idx, dep_in1, what);
  if (failed()) return result_.status;
  command& c = pe->trace[idx];
  c.dep[dep_other] = a->last_read;
  c.dep[dep_out] = a->last_write;
  a->last_write = cmd_ref{static_cast<uint32_t>(pe->id), idx};
  if (!x || !b) return KV_MTIA_OK;  // timing-only run
  float* out = pe->acc_pool.data() + a->offset;
  if (acc_flags & KV_MM_ZERO) std::fill(out, out + int64_t(a->rows) * a->cols, 0.0f);
  b += int64_t(seg.first) * bsz;
  for (int32_t s = 0; s < seg.count; ++s)
    if (load_int(b, bsz, s + 1) < load_int(b, bsz, s))
      return fail(KV_MTIA_ERR_ARG, at(*pe, what) + "boundary " + std::to_string(seg.first + s + 1) +
                                       " is below the one before it (boundaries must not decrease)");
  // Row positions increase, so one pass over the segments.
  int32_t s = 0;
  for (int32_t i = 0; i < rows; ++i) {
    const int64_t pos = row_base + i;
    while (s < seg.count && load_int(b, bsz, s + 1) <= pos) ++s;
    if (s >= seg.count) break;
    if (pos < load_int(b, bsz, s)) continue;
    float* dst = out + int64_t(s) * cols;
    for (int32_t col = 0; col < cols; ++col) dst[col] += load_f(x, in_dtype, int64_t(i) * cols + col);
  }
  return KV_MTIA_OK;
}

}  // namespace kevolve::emu::mtia
