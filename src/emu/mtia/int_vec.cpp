// Integer vector ops, compares and the gather from local memory, on the SE
// or the vector core: what data-dependent kernels (hashing, branch-free
// searches) are written with. Costs (knowledge/hardware/mtia2i/engines.md):
//   SE:   32 lanes of 32 bits per cycle (se_elems_per_cycle), KV_I64 at
//         half that; vector core: vec_bytes_per_cycle bytes per cycle;
//   64-bit MUL / MULHI_U: int64_mul_cost passes, REM_U: int_div_cost passes;
//   gather: se_ / vec_gather_elems_per_cycle.
#include <cmath>
#include <cstring>
#include <type_traits>

#include "emu/mtia/device.h"
#include "emu/mtia/numerics.h"

namespace kevolve::emu::mtia {

namespace {

int bytes_of(int32_t dtype) { return dtype == KV_I64 ? 8 : elem_bytes(dtype); }

std::string at(const pe_state& pe, const char* what) { return "pe " + std::to_string(pe.id) + ": " + what + ": "; }

// High 64 bits of the unsigned 128-bit product, from 32-bit halves.
uint64_t mulhi64(uint64_t a, uint64_t b) {
  const uint64_t al = uint32_t(a), ah = a >> 32, bl = uint32_t(b), bh = b >> 32;
  const uint64_t ll = al * bl, lh = al * bh, hl = ah * bl, hh = ah * bh;
  const uint64_t mid = (ll >> 32) + uint32_t(lh) + uint32_t(hl);
  return hh + (lh >> 32) + (hl >> 32) + (mid >> 32);
}

template <class U>
U apply_int(int32_t op, U x, U y, U imm, const char** err) {
  constexpr int bits = int(sizeof(U) * 8);
  switch (op) {
    case KV_IOP_ADD: return U(x + y);
    case KV_IOP_SUB: return U(x - y);
    case KV_IOP_MUL: return U(x * y);
    case KV_IOP_MULHI_U:
      if constexpr (sizeof(U) == 8) return mulhi64(x, y);
      else return U(uint64_t(x) * y >> 32);
    case KV_IOP_AND: return U(x & y);
    case KV_IOP_OR: return U(x | y);
    case KV_IOP_XOR: return U(x ^ y);
    case KV_IOP_SHL: return U(x << (y % bits));
    case KV_IOP_SHR_U: return U(x >> (y % bits));
    case KV_IOP_REM_U:
      if (y == 0) {
        *err = "KV_IOP_REM_U by zero";
        return 0;
      }
      return U(x % y);
    case KV_IOP_GE_U: return U(x >= y ? 1 : 0);
    case KV_IOP_ADD_IF: return U(y != 0 ? x + imm : x);
    case KV_IOP_MIN: {
      using S = std::make_signed_t<U>;
      return S(x) < S(y) ? x : y;
    }
    default: return x;
  }
}

template <class U>
const char* run_int(int32_t op, const uint8_t* x, const uint8_t* y, uint8_t* o, int32_t n, uint64_t imm) {
  const char* err = nullptr;
  const U im = U(imm);
  for (int32_t i = 0; i < n; ++i) {
    U a, b = im;
    std::memcpy(&a, x + sizeof(U) * i, sizeof(U));
    if (y) std::memcpy(&b, y + sizeof(U) * i, sizeof(U));
    const U r = apply_int<U>(op, a, b, im, &err);
    if (err) return err;
    std::memcpy(o + sizeof(U) * i, &r, sizeof(U));
  }
  return nullptr;
}

template <class T>
bool compare(int32_t c, T a, T b) {
  return c == KV_CMP_LT ? a < b : c == KV_CMP_LE ? a <= b : a == b;
}

int64_t load_i64(const uint8_t* p, int64_t i) {
  int64_t v;
  std::memcpy(&v, p + 8 * i, 8);
  return v;
}

}  // namespace

// Cycles of one simple op on n elements of `bytes` each.
static double int_pass_cycles(const params& p, bool on_vec, int64_t n, int bytes) {
  return on_vec ? double(n) * bytes / p.vec_bytes_per_cycle : double(n) * (bytes / 4) / p.se_elems_per_cycle;
}

int device::int_op(bool on_vec, int32_t op, int32_t cb_x, uint32_t x_flags, int32_t cb_y, uint32_t y_flags,
                   int32_t cb_out, int32_t n, int32_t dtype, uint64_t imm) {
  const char* what = "kv_mtia_int_op";
  pe_state* pe = current_pe(what);
  if (!pe) return result_.status;
  if (op < KV_IOP_ADD || op > KV_IOP_MIN) return fail(KV_MTIA_ERR_ARG, at(*pe, what) + "unknown op " + std::to_string(op));
  if (dtype != KV_I32 && dtype != KV_I64) return fail(KV_MTIA_ERR_ARG, at(*pe, what) + "dtype must be KV_I32 or KV_I64");
  if (n < 1) return fail(KV_MTIA_ERR_ARG, at(*pe, what) + "n must be >= 1");
  if ((op == KV_IOP_ADD_IF && cb_y < 0) || cb_y == cb_x)
    return fail(KV_MTIA_ERR_ARG, at(*pe, what) + "cb_y must differ from cb_x; KV_IOP_ADD_IF needs the mask buffer cb_y");
  const int bytes = dtype == KV_I64 ? 8 : 4;
  if (op == KV_IOP_REM_U && cb_y < 0 && (bytes == 8 ? imm : uint32_t(imm)) == 0)
    return fail(KV_MTIA_ERR_ARG, at(*pe, what) + "KV_IOP_REM_U by an immediate zero");
  double passes = 1;
  if (op == KV_IOP_REM_U) passes = p_.int_div_cost;
  else if (bytes == 8 && (op == KV_IOP_MUL || op == KV_IOP_MULHI_U)) passes = p_.int64_mul_cost;
  const uint8_t eng = on_vec ? vec : se;
  if (!record(*pe, op_int, eng, std::ceil(passes * int_pass_cycles(p_, on_vec, n, bytes)))) return result_.status;
  const uint32_t idx = static_cast<uint32_t>(pe->trace.size() - 1);
  const uint8_t* x = cb_read(*pe, cb_x, eng, int64_t(n) * bytes, x_flags, idx, dep_in0, what);
  if (failed()) return result_.status;
  const uint8_t* y = nullptr;
  if (cb_y >= 0) {
    y = cb_read(*pe, cb_y, eng, int64_t(n) * bytes, y_flags, idx, dep_in1, what);
    if (failed()) return result_.status;
  }
  uint8_t* o = cb_write(*pe, cb_out, eng, int64_t(n) * bytes, idx, what);
  if (failed() || !o) return result_.status;
  const char* err = bytes == 8 ? run_int<uint64_t>(op, x, y, o, n, imm) : run_int<uint32_t>(op, x, y, o, n, imm);
  if (err) return fail(KV_MTIA_ERR_ARG, at(*pe, what) + err);
  return KV_MTIA_OK;
}

int device::cmp(bool on_vec, int32_t c, int32_t cb_x, uint32_t x_flags, int32_t cb_y, uint32_t y_flags, int32_t cb_out,
                int32_t n, int32_t in_dtype) {
  const char* what = "kv_mtia_cmp";
  pe_state* pe = current_pe(what);
  if (!pe) return result_.status;
  if (c < KV_CMP_LT || c > KV_CMP_EQ) return fail(KV_MTIA_ERR_ARG, at(*pe, what) + "unknown compare " + std::to_string(c));
  const int bytes = bytes_of(in_dtype);
  if (bytes == 0) return fail(KV_MTIA_ERR_ARG, at(*pe, what) + "in_dtype must be f32, f16, bf16, i32 or i64");
  if (n < 1 || cb_y < 0 || cb_y == cb_x)
    return fail(KV_MTIA_ERR_ARG, at(*pe, what) + "needs n >= 1 and two different buffers");
  const uint8_t eng = on_vec ? vec : se;
  // One pass at the wider of input and output (KV_I32 mask) width.
  if (!record(*pe, op_cmp, eng, std::ceil(int_pass_cycles(p_, on_vec, n, bytes < 4 ? 4 : bytes))))
    return result_.status;
  const uint32_t idx = static_cast<uint32_t>(pe->trace.size() - 1);
  const uint8_t* x = cb_read(*pe, cb_x, eng, int64_t(n) * bytes, x_flags, idx, dep_in0, what);
  if (failed()) return result_.status;
  const uint8_t* y = cb_read(*pe, cb_y, eng, int64_t(n) * bytes, y_flags, idx, dep_in1, what);
  if (failed()) return result_.status;
  uint8_t* o = cb_write(*pe, cb_out, eng, int64_t(n) * 4, idx, what);
  if (failed() || !o) return result_.status;
  for (int32_t i = 0; i < n; ++i) {
    bool r;
    if (in_dtype == KV_I64) r = compare(c, load_i64(x, i), load_i64(y, i));
    else if (in_dtype == KV_I32) r = compare(c, load_i(x, i), load_i(y, i));
    else r = compare(c, load_f(x, in_dtype, i), load_f(y, in_dtype, i));
    store_i(o, i, r ? 1 : 0);
  }
  return KV_MTIA_OK;
}

int device::lm_gather(bool on_vec, int32_t cb_table, uint32_t table_flags, int32_t table_elems, int32_t dtype,
                      int32_t cb_idx, uint32_t idx_flags, int32_t cb_out, int32_t n, int32_t offset) {
  const char* what = "kv_mtia_lm_gather";
  pe_state* pe = current_pe(what);
  if (!pe) return result_.status;
  const int bytes = bytes_of(dtype);
  if (dtype != KV_F32 && dtype != KV_I32 && dtype != KV_I64)
    return fail(KV_MTIA_ERR_ARG, at(*pe, what) + "dtype must be f32, i32 or i64");
  if (n < 1 || table_elems < 1 || cb_table == cb_idx)
    return fail(KV_MTIA_ERR_ARG, at(*pe, what) + "needs n, table_elems >= 1 and two different buffers");
  const uint8_t eng = on_vec ? vec : se;
  const double rate = on_vec ? p_.vec_gather_elems_per_cycle : p_.se_gather_elems_per_cycle;
  if (!record(*pe, op_lm_gather, eng, std::ceil(double(n) / rate))) return result_.status;
  const uint32_t idx = static_cast<uint32_t>(pe->trace.size() - 1);
  const uint8_t* t = cb_read(*pe, cb_table, eng, int64_t(table_elems) * bytes, table_flags, idx, dep_other, what);
  if (failed()) return result_.status;
  const uint8_t* ix = cb_read(*pe, cb_idx, eng, int64_t(n) * 4, idx_flags, idx, dep_in0, what);
  if (failed()) return result_.status;
  uint8_t* o = cb_write(*pe, cb_out, eng, int64_t(n) * bytes, idx, what);
  if (failed() || !o) return result_.status;
  for (int32_t i = 0; i < n; ++i) {
    const int64_t k = int64_t(load_i(ix, i)) + offset;
    if (k < 0 || k >= table_elems)
      return fail(KV_MTIA_ERR_ADDRESS, at(*pe, what) + "index " + std::to_string(k) + " of element " +
                                           std::to_string(i) + " is outside the table of " +
                                           std::to_string(table_elems) + " elements");
    std::memcpy(o + int64_t(bytes) * i, t + bytes * k, size_t(bytes));
  }
  return KV_MTIA_OK;
}

}  // namespace kevolve::emu::mtia
