// Float-to-integer conversion on the SE or the vector core: the scaled floor
// a data-dependent kernel needs to turn a value into a table index (the cell
// of a grid index, a histogram bin). Cost (knowledge/hardware/mtia2i/
// engines.md): one SE pass, as the unary ops op(a*x + b); on the vector core
// an fp32 element op (two ops, the FMA convention of kv_mtia_vec_op).
#include <cmath>

#include "emu/mtia/device.h"
#include "emu/mtia/numerics.h"

namespace kevolve::emu::mtia {

namespace {
std::string at(const pe_state& pe, const char* what) { return "pe " + std::to_string(pe.id) + ": " + what + ": "; }

int32_t cvt_f2i_value(float x, float a, float b, int32_t lo, int32_t hi) {
  const float v = a * x + b;  // two roundings: the emulator builds without contraction
  if (std::isnan(v)) return lo;
  const double f = std::floor(double(v));
  if (f <= double(lo)) return lo;
  if (f >= double(hi)) return hi;
  return static_cast<int32_t>(f);
}
}  // namespace

int device::cvt_f2i(bool on_vec, int32_t cb_x, uint32_t x_flags, int32_t cb_out, int32_t n, int32_t in_dtype, float a,
                    float b, int32_t lo, int32_t hi) {
  const char* what = "kv_mtia_cvt_f2i";
  pe_state* pe = current_pe(what);
  if (!pe) return result_.status;
  if (!is_float(in_dtype)) return fail(KV_MTIA_ERR_ARG, at(*pe, what) + "in_dtype must be f32, f16 or bf16");
  if (n < 1 || lo > hi || cb_x == cb_out)
    return fail(KV_MTIA_ERR_ARG, at(*pe, what) + "needs n >= 1, lo <= hi and two different buffers");
  if (!std::isfinite(a) || !std::isfinite(b))
    return fail(KV_MTIA_ERR_ARG, at(*pe, what) + "the scale a and offset b must be finite");
  const uint8_t eng = on_vec ? vec : se;
  const int isz = elem_bytes(in_dtype);
  const double work = on_vec ? double(n) * 2 * (in_dtype == KV_F16 ? 2 : 4) / p_.vec_bytes_per_cycle
                             : double(n) / p_.se_elems_per_cycle;
  if (!record(*pe, op_cvt, eng, std::ceil(work))) return result_.status;
  const uint32_t idx = static_cast<uint32_t>(pe->trace.size() - 1);
  const uint8_t* x = cb_read(*pe, cb_x, eng, int64_t(n) * isz, x_flags, idx, dep_in0, what);
  if (failed()) return result_.status;
  uint8_t* o = cb_write(*pe, cb_out, eng, int64_t(n) * 4, idx, what);
  if (failed() || !o || !x) return result_.status;
  for (int32_t i = 0; i < n; ++i) store_i(o, i, cvt_f2i_value(load_f(x, in_dtype, i), a, b, lo, hi));
  return KV_MTIA_OK;
}

}  // namespace kevolve::emu::mtia
