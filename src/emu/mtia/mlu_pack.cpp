// kv_mtia_mlu_pack: the MLU packs a matrix (rows x cols of a row stride ld),
// or the strictly lower triangle of a square one row by row, as one part of
// a staging slot that collects several, so that outputs whose pieces are not
// 32-byte multiples (a pairwise interaction's n(n-1)/2 values per sample, a
// convolution's Cout x Lout block) leave in one aligned DMA. Cost
// (knowledge/hardware/mtia2i/engines.md): bytes written / mlu_bytes_per_cycle.
#include <cmath>
#include <cstring>

#include "emu/mtia/device.h"

namespace kevolve::emu::mtia {

namespace {
std::string at(const pe_state& pe, const char* what) { return "pe " + std::to_string(pe.id) + ": " + what + ": "; }
}  // namespace

int device::mlu_pack(int32_t cb_in, uint32_t in_flags, int32_t rows, int32_t cols, int32_t ld, int32_t eb,
                     int32_t lower, int32_t cb_out, int32_t part, int32_t parts) {
  const char* what = "kv_mtia_mlu_pack";
  pe_state* pe = current_pe(what);
  if (!pe) return result_.status;
  if (rows < 1 || cols < 1 || ld < cols || (lower && (rows != cols || rows < 2)) || (eb != 2 && eb != 4) ||
      parts < 1 || part < 0 || part >= parts || cb_in == cb_out)
    return fail(KV_MTIA_ERR_ARG, at(*pe, what) + "needs rows, cols >= 1, ld >= cols (a square matrix of n >= 2 for "
                                                 "the lower triangle), elem_bytes 2 or 4, 0 <= part < parts and two "
                                                 "different buffers");
  cb_state* co = check_cb(*pe, cb_out, what);
  if (!co) return result_.status;
  const std::string where = at(*pe, what) + "cb " + std::to_string(cb_out);
  if (co->producer == no_engine) co->producer = mlu;
  if (co->producer != mlu)
    return fail(KV_MTIA_ERR_ARG, where + " is written by " + engine_name(co->producer) +
                                     " (one producer engine per circular buffer)");
  const int64_t piece = (lower ? int64_t(rows) * (rows - 1) / 2 : int64_t(rows) * cols) * eb, total = piece * parts;
  if (total > co->slot_bytes)
    return fail(KV_MTIA_ERR_CAPACITY, where + ": " + std::to_string(parts) + " parts need " +
                                          std::to_string(total) + " bytes, slots hold " +
                                          std::to_string(co->slot_bytes));
  if (part != co->filling)
    return fail(KV_MTIA_ERR_ARG, where + ": part " + std::to_string(part) + " out of order (the open slot expects part " +
                                     std::to_string(co->filling) + "; parts go 0 .. parts - 1)");
  slot_ring& r = co->ring;
  if (part == 0 && (r.full() || (r.pushes >= r.n_slots && r.pushes - r.n_slots >= r.pops)))
    return fail(KV_MTIA_ERR_LIMIT, where + ": its back slot is still in use; pop (or issue the consumer of) the slot "
                                           "it reuses before filling it");
  command* c = record(*pe, op_pack, mlu, std::ceil(double(piece) / p_.mlu_bytes_per_cycle));
  if (!c) return result_.status;
  const uint32_t idx = static_cast<uint32_t>(pe->trace.size() - 1);
  if (r.pushes >= r.n_slots) pe->trace[idx].dep[dep_out] = r.popper[r.wrap(r.back + r.depth - r.n_slots)];
  const uint8_t* x = cb_read(*pe, cb_in, mlu, (int64_t(rows - 1) * ld + cols) * eb, in_flags, idx, dep_in0, what);
  if (failed()) return result_.status;
  if (x && functional_) {
    uint8_t* o = pe->store.data() + co->offset + uint64_t(r.back) * co->slot_bytes + uint64_t(part) * piece;
    for (int32_t i = lower ? 1 : 0; i < rows; ++i) {
      const int32_t w = lower ? i : cols;
      std::memcpy(o, x + int64_t(i) * ld * eb, size_t(w) * eb);
      o += int64_t(w) * eb;
    }
  }
  if (part + 1 < parts) {
    co->filling = part + 1;
    return KV_MTIA_OK;
  }
  co->filling = 0;
  r.filled[r.back] = static_cast<int32_t>(total);
  ring_push(r, cmd_ref{static_cast<uint32_t>(pe->id), idx});
  return KV_MTIA_OK;
}

}  // namespace kevolve::emu::mtia
