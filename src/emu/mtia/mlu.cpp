// Memory layout unit (transpose, strided copy for reshape/slice, concat) and
// the explicit pop of a circular buffer.
#include <cmath>
#include <cstring>

#include "emu/mtia/device.h"

namespace kevolve::emu::mtia {

namespace {
std::string at(const pe_state& pe, const char* what) { return "pe " + std::to_string(pe.id) + ": " + what + ": "; }
}  // namespace

int device::cb_pop(int32_t cb) {
  const char* what = "kv_mtia_cb_pop";
  pe_state* pe = current_pe(what);
  if (!pe) return result_.status;
  cb_state* s = check_cb(*pe, cb, what);
  if (!s) return result_.status;
  if (s->consumer == no_engine)
    return fail(KV_MTIA_ERR_ARG, at(*pe, what) + "cb " + std::to_string(cb) + " has not been read yet (pop follows a "
                                                 "KV_CB_KEEP read)");
  if (s->consumer == scalar_core)
    return fail(KV_MTIA_ERR_ARG, at(*pe, what) + "cb " + std::to_string(cb) + " is consumed by the scalar core: free it "
                                                 "with kv_mtia_sc_peek_int(..., KV_CB_POP, ...)");
  if (!record(*pe, op_pop, s->consumer, 0)) return result_.status;
  const uint32_t idx = static_cast<uint32_t>(pe->trace.size() - 1);
  cb_read(*pe, cb, s->consumer, 0, KV_CB_POP, idx, dep_in0, what);
  return result_.status;
}

int device::mlu_transpose(int32_t cb_in, uint32_t flags, int32_t rows, int32_t cols, int32_t eb, int32_t cb_out) {
  const char* what = "kv_mtia_mlu_transpose";
  pe_state* pe = current_pe(what);
  if (!pe) return result_.status;
  if (rows < 1 || cols < 1 || (eb != 1 && eb != 2 && eb != 4 && eb != 8))
    return fail(KV_MTIA_ERR_ARG, at(*pe, what) + "rows, cols >= 1 and elem_bytes 1, 2, 4 or 8");
  const int64_t bytes = int64_t(rows) * cols * eb;
  if (!record(*pe, op_transpose, mlu, std::ceil(double(bytes) / p_.mlu_bytes_per_cycle))) return result_.status;
  const uint32_t idx = static_cast<uint32_t>(pe->trace.size() - 1);
  const uint8_t* x = cb_read(*pe, cb_in, mlu, bytes, flags, idx, dep_in0, what);
  if (failed()) return result_.status;
  uint8_t* o = cb_write(*pe, cb_out, mlu, bytes, idx, what);
  if (failed() || !o) return result_.status;
  for (int32_t r = 0; r < rows; ++r)
    for (int32_t c = 0; c < cols; ++c) std::memcpy(o + (int64_t(c) * rows + r) * eb, x + (int64_t(r) * cols + c) * eb, eb);
  return KV_MTIA_OK;
}

int device::mlu_copy(int32_t cb_in, uint32_t flags, int32_t in_offset, int32_t rows, int32_t row_bytes,
                     int32_t in_stride, int32_t cb_out) {
  const char* what = "kv_mtia_mlu_copy";
  pe_state* pe = current_pe(what);
  if (!pe) return result_.status;
  if (rows < 1 || row_bytes < 1 || in_offset < 0 || (rows > 1 && in_stride < row_bytes))
    return fail(KV_MTIA_ERR_ARG, at(*pe, what) + "needs rows, row_bytes >= 1, in_offset >= 0, in_stride >= row_bytes");
  const int64_t in_extent = int64_t(in_offset) + int64_t(rows - 1) * in_stride + row_bytes;
  const int64_t bytes = int64_t(rows) * row_bytes;
  if (!record(*pe, op_copy, mlu, std::ceil(double(bytes) / p_.mlu_bytes_per_cycle))) return result_.status;
  const uint32_t idx = static_cast<uint32_t>(pe->trace.size() - 1);
  const uint8_t* x = cb_read(*pe, cb_in, mlu, in_extent, flags, idx, dep_in0, what);
  if (failed()) return result_.status;
  uint8_t* o = cb_write(*pe, cb_out, mlu, bytes, idx, what);
  if (failed() || !o) return result_.status;
  for (int32_t r = 0; r < rows; ++r)
    std::memcpy(o + int64_t(r) * row_bytes, x + in_offset + int64_t(r) * in_stride, row_bytes);
  return KV_MTIA_OK;
}

int device::mlu_concat(int32_t cb_a, int32_t cb_b, uint32_t flags, int32_t rows, int32_t arb, int32_t brb,
                       int32_t cb_out) {
  const char* what = "kv_mtia_mlu_concat";
  pe_state* pe = current_pe(what);
  if (!pe) return result_.status;
  if (rows < 1 || arb < 1 || brb < 1 || cb_a == cb_b)
    return fail(KV_MTIA_ERR_ARG, at(*pe, what) + "needs rows, row bytes >= 1 and two different buffers");
  const int64_t bytes = int64_t(rows) * (arb + brb);
  if (!record(*pe, op_concat, mlu, std::ceil(double(bytes) / p_.mlu_bytes_per_cycle))) return result_.status;
  const uint32_t idx = static_cast<uint32_t>(pe->trace.size() - 1);
  const uint8_t* a = cb_read(*pe, cb_a, mlu, int64_t(rows) * arb, flags, idx, dep_in0, what);
  if (failed()) return result_.status;
  const uint8_t* b = cb_read(*pe, cb_b, mlu, int64_t(rows) * brb, flags, idx, dep_in1, what);
  if (failed()) return result_.status;
  uint8_t* o = cb_write(*pe, cb_out, mlu, bytes, idx, what);
  if (failed() || !o) return result_.status;
  for (int32_t r = 0; r < rows; ++r) {
    std::memcpy(o + int64_t(r) * (arb + brb), a + int64_t(r) * arb, arb);
    std::memcpy(o + int64_t(r) * (arb + brb) + arb, b + int64_t(r) * brb, brb);
  }
  return KV_MTIA_OK;
}

}  // namespace kevolve::emu::mtia
