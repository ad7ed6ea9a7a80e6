// SIMD engine and RISC-V vector core: elementwise, broadcast, row reductions,
// LUT nonlinearities, row-accumulate, prefix sums. fp32 arithmetic inside.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "emu/mtia/device.h"
#include "emu/mtia/numerics.h"
#include "emu/mtia/ops.h"

namespace kevolve::emu::mtia {

namespace {
std::string at(const pe_state& pe, const char* what) { return "pe " + std::to_string(pe.id) + ": " + what + ": "; }

int64_t y_elems(int32_t bcast, int32_t rows, int32_t cols) {
  return bcast == KV_Y_ROW ? cols : bcast == KV_Y_COL ? rows : int64_t(rows) * cols;
}
int64_t y_index(int32_t bcast, int32_t r, int32_t c, int32_t cols) {
  return bcast == KV_Y_ROW ? c : bcast == KV_Y_COL ? r : int64_t(r) * cols + c;
}

// The row helpers are always inlined into the cloned callers below, so that
// they are vectorised for the host's vector unit too.
#define KV_ROW_HELPER inline __attribute__((always_inline))

// out[c] = x[c] op y[c * y_step] (y_step 0: one y for the whole row).
template <int32_t Op>
KV_ROW_HELPER void binary_row_op(const float* x, const float* y, int32_t y_step, float* out, int32_t n) {
  if (y_step == 0) {
    const float yv = *y;
    for (int32_t c = 0; c < n; ++c) out[c] = apply_binary(Op, x[c], yv);
  } else {
    for (int32_t c = 0; c < n; ++c) out[c] = apply_binary(Op, x[c], y[c]);
  }
}

KV_ROW_HELPER void binary_row(int32_t op, const float* x, const float* y, int32_t y_step, float* out, int32_t n) {
  switch (op) {
    case KV_OP_ADD: return binary_row_op<KV_OP_ADD>(x, y, y_step, out, n);
    case KV_OP_SUB: return binary_row_op<KV_OP_SUB>(x, y, y_step, out, n);
    case KV_OP_MUL: return binary_row_op<KV_OP_MUL>(x, y, y_step, out, n);
    case KV_OP_MAX: return binary_row_op<KV_OP_MAX>(x, y, y_step, out, n);
    case KV_OP_MIN: return binary_row_op<KV_OP_MIN>(x, y, y_step, out, n);
    default: return binary_row_op<KV_OP_DIV>(x, y, y_step, out, n);
  }
}

// Sums of G rows, each adding its columns in order; the rows' independent
// additions overlap on the host.
template <int G>
KV_ROW_HELPER void sum_rows(const float* x, int32_t cols, float* out) {
  float acc[G] = {};
  for (int32_t c = 0; c < cols; ++c)
    for (int r = 0; r < G; ++r) acc[r] = acc[r] + x[size_t(r) * cols + c];
  for (int r = 0; r < G; ++r) out[r] = acc[r];
}

// What a running max (from -inf, keeping the current value unless an element
// is larger) ends with: the largest non-NaN value, and when that is zero the
// first zero in column order (its sign), -inf if there is none. The value is
// found eight lanes at a time.
KV_ROW_HELPER float row_max(const float* x, int32_t n) {
  float m[8];
  std::fill(m, m + 8, -INFINITY);
  int32_t c = 0;
  for (; c + 8 <= n; c += 8)
    for (int l = 0; l < 8; ++l) m[l] = m[l] < x[c + l] ? x[c + l] : m[l];
  float best = -INFINITY;
  for (int l = 0; l < 8; ++l) best = best < m[l] ? m[l] : best;
  for (; c < n; ++c) best = best < x[c] ? x[c] : best;
  if (best != 0.0f) return best;
  for (c = 0;; ++c)
    if (x[c] == 0.0f) return x[c];
}

// SUM and RMAX of each row (column order, as the engine adds), up to 8 rows
// at a time.
__attribute__((target_clones("avx512f", "avx2", "default"))) void reduce_float(
    int32_t op, const uint8_t* x, uint8_t* o, int32_t rows, int32_t cols, int32_t idt, int32_t odt,
    std::vector<float>& scratch) {
  constexpr int32_t G = 8;
  if (scratch.size() < size_t(cols) * G) scratch.resize(size_t(cols) * G);
  float* xs = scratch.data();
  const int isz = elem_bytes(idt);
  for (int32_t r0 = 0; r0 < rows; r0 += G) {
    const int32_t g = std::min(G, rows - r0);
    widen(x + int64_t(r0) * cols * isz, idt, int64_t(g) * cols, xs);
    float res[G];
    if (op == KV_OP_SUM) {
      switch (g) {
        case 1: sum_rows<1>(xs, cols, res); break;
        case 2: sum_rows<2>(xs, cols, res); break;
        case 3: sum_rows<3>(xs, cols, res); break;
        case 4: sum_rows<4>(xs, cols, res); break;
        case 5: sum_rows<5>(xs, cols, res); break;
        case 6: sum_rows<6>(xs, cols, res); break;
        case 7: sum_rows<7>(xs, cols, res); break;
        default: sum_rows<8>(xs, cols, res);
      }
    } else {
      for (int32_t r = 0; r < g; ++r) res[r] = row_max(xs + size_t(r) * cols, cols);
    }
    for (int32_t r = 0; r < g; ++r) store_f(o, odt, r0 + r, res[r]);
  }
}

// Row by row: widen to fp32, the op, round to out dtype (reductions above).
// Cloned for wider vector units: the elementwise loops give the same bits at
// any width (no FMA: no contraction).
__attribute__((target_clones("avx512f", "avx2", "default"))) void compute_float(
    int32_t op, const uint8_t* x, const uint8_t* y, uint8_t* o, int32_t bcast, int32_t rows, int32_t cols, int32_t idt,
    int32_t odt, float a, float b, std::vector<float>& scratch) {
  if (is_reduction(op)) return reduce_float(op, x, o, rows, cols, idt, odt, scratch);
  if (scratch.size() < size_t(cols) * 3) scratch.resize(size_t(cols) * 3);
  float* xs = scratch.data();
  float* ys = xs + cols;
  float* rs = ys + cols;
  const int isz = elem_bytes(idt), osz = elem_bytes(odt);
  if (y && bcast == KV_Y_ROW) widen(y, idt, cols, ys);
  for (int32_t r = 0; r < rows; ++r) {
    const int64_t base = int64_t(r) * cols;
    widen(x + base * isz, idt, cols, xs);
    if (op == KV_OP_CUMSUM) {
      float accv = 0.0f;
      for (int32_t c = 0; c < cols; ++c) rs[c] = accv = accv + xs[c];
      narrow(rs, odt, cols, o + base * osz);
      continue;
    }
    if (!y) {
      for (int32_t c = 0; c < cols; ++c) rs[c] = a * xs[c] + b;
      apply_unary_row(op, rs, cols);
    } else if (bcast == KV_Y_ROW) {
      binary_row(op, xs, ys, 1, rs, cols);
    } else if (bcast == KV_Y_COL) {
      const float yv = load_f(y, idt, r);
      binary_row(op, xs, &yv, 0, rs, cols);
    } else {
      widen(y + base * isz, idt, cols, ys);
      binary_row(op, xs, ys, 1, rs, cols);
    }
    narrow(rs, odt, cols, o + base * osz);
  }
}

void compute_int(int32_t op, const uint8_t* x, const uint8_t* y, uint8_t* o, int32_t bcast, int32_t rows,
                 int32_t cols) {
  for (int32_t r = 0; r < rows; ++r) {
    const int64_t base = int64_t(r) * cols;
    if (is_reduction(op) || op == KV_OP_CUMSUM) {
      int32_t accv = op == KV_OP_RMAX ? INT32_MIN : 0;
      for (int32_t c = 0; c < cols; ++c) {
        const int32_t v = load_i(x, base + c);
        accv = op == KV_OP_RMAX ? std::max(accv, v) : apply_binary_i(KV_OP_ADD, accv, v);
        if (op == KV_OP_CUMSUM) store_i(o, base + c, accv);
      }
      if (op != KV_OP_CUMSUM) store_i(o, r, accv);
      continue;
    }
    for (int32_t c = 0; c < cols; ++c) {
      const int32_t v = load_i(x, base + c);
      int32_t res = v;
      if (y) res = apply_binary_i(op, v, load_i(y, y_index(bcast, r, c, cols)));
      else if (op == KV_OP_NEG) res = apply_binary_i(KV_OP_SUB, 0, v);
      else if (op == KV_OP_RELU) res = std::max(v, 0);
      store_i(o, base + c, res);
    }
  }
}
}  // namespace

const float* f16_table() {
  static const std::vector<float> table = [] {
    std::vector<float> t(65536);
    for (uint32_t h = 0; h < 65536; ++h) t[h] = kv_f16_to_f32(static_cast<uint16_t>(h));
    return t;
  }();
  return table.data();
}

int device::elementwise(bool on_vec, int32_t op, int32_t cb_x, uint32_t x_flags, int32_t cb_y, uint32_t y_flags,
                        int32_t y_bcast, int32_t cb_out, int32_t rows, int32_t cols, int32_t in_dtype,
                        int32_t out_dtype, float a, float b) {
  const char* what = on_vec ? "kv_mtia_vec_op" : "kv_mtia_se_op";
  pe_state* pe = current_pe(what);
  if (!pe) return result_.status;
  const uint8_t eng = on_vec ? vec : se;
  const bool ints = in_dtype == KV_I32;
  const bool known = is_unary(op) || is_binary(op) || is_reduction(op) || (on_vec && op == KV_OP_CUMSUM);
  if (!known) return fail(KV_MTIA_ERR_ARG, at(*pe, what) + "unknown op " + std::to_string(op) + " for this engine");
  if (rows < 1 || cols < 1) return fail(KV_MTIA_ERR_ARG, at(*pe, what) + "rows and cols must be >= 1");
  if (elem_bytes(in_dtype) == 0 || elem_bytes(out_dtype) == 0 || (ints && !on_vec) || (ints && out_dtype != KV_I32) ||
      (ints && is_unary(op) && op != KV_OP_COPY && op != KV_OP_NEG && op != KV_OP_RELU) ||
      (!ints && out_dtype == KV_I32))
    return fail(KV_MTIA_ERR_ARG, at(*pe, what) + "unsupported dtypes for this op (SE: f32/f16/bf16; vector core "
                                                 "also i32 with i32 output and integer ops)");
  const bool binary = is_binary(op);
  if (binary != (cb_y >= 0) || (binary && (cb_y == cb_x || y_bcast < KV_Y_FULL || y_bcast > KV_Y_COL)))
    return fail(KV_MTIA_ERR_ARG, at(*pe, what) + "binary ops take a second buffer (not cb_x) and a valid y_bcast; "
                                                 "other ops take cb_y = -1");
  const int64_t elems = int64_t(rows) * cols;
  const int64_t out_elems = is_reduction(op) ? rows : elems;
  double work;
  if (on_vec) {
    const int compute_bytes = in_dtype == KV_F16 ? 2 : 4;  // one element-op = 2 ops (FMA convention)
    work = double(elems) * 2 * compute_bytes / p_.vec_bytes_per_cycle;
  } else {
    work = double(elems) / (is_lut(op) ? p_.se_lut_elems_per_cycle : p_.se_elems_per_cycle);
  }
  command* c = record(*pe, on_vec ? op_vec : op_se, eng, std::ceil(work));
  if (!c) return result_.status;
  const uint32_t idx = static_cast<uint32_t>(pe->trace.size() - 1);
  const int isz = elem_bytes(in_dtype);
  const uint8_t* x = cb_read(*pe, cb_x, eng, elems * isz, x_flags, idx, dep_in0, what);
  if (failed()) return result_.status;
  const uint8_t* y = nullptr;
  if (binary) {
    y = cb_read(*pe, cb_y, eng, y_elems(y_bcast, rows, cols) * isz, y_flags, idx, dep_in1, what);
    if (failed()) return result_.status;
  }
  uint8_t* o = cb_write(*pe, cb_out, eng, out_elems * elem_bytes(out_dtype), idx, what);
  if (failed() || !o) return result_.status;
  if (ints)
    compute_int(op, x, y, o, y_bcast, rows, cols);
  else
    compute_float(op, x, y, o, y_bcast, rows, cols, in_dtype, out_dtype, a, b, pe->scratch);
  return KV_MTIA_OK;
}

int device::se_row_accum(int32_t cb_in, uint32_t flags, int32_t rows, int32_t cols, int32_t in_dtype, int32_t cb_out,
                         int32_t out_dtype) {
  const char* what = "kv_mtia_se_row_accum";
  pe_state* pe = current_pe(what);
  if (!pe) return result_.status;
  if (rows < 1 || rows > 128 || cols < 1)
    return fail(KV_MTIA_ERR_ARG, at(*pe, what) + "rows must be in 1..128 and cols >= 1");
  if (!is_float(in_dtype) || !is_float(out_dtype))
    return fail(KV_MTIA_ERR_ARG, at(*pe, what) + "dtypes must be f32, f16 or bf16");
  command* c = record(*pe, op_row_accum, se, std::ceil(double(rows) * cols / p_.se_elems_per_cycle));
  if (!c) return result_.status;
  const uint32_t idx = static_cast<uint32_t>(pe->trace.size() - 1);
  const uint8_t* x = cb_read(*pe, cb_in, se, int64_t(rows) * cols * elem_bytes(in_dtype), flags, idx, dep_in0, what);
  if (failed()) return result_.status;
  uint8_t* o = cb_write(*pe, cb_out, se, int64_t(cols) * elem_bytes(out_dtype), idx, what);
  if (failed() || !o) return result_.status;
  // Per column, rows added in order (a row of column sums at a time).
  std::vector<float>& scratch = pe->scratch;
  if (scratch.size() < size_t(cols) * 2) scratch.resize(size_t(cols) * 2);
  float* sum = scratch.data();
  float* row = sum + cols;
  std::fill(sum, sum + cols, 0.0f);
  const int isz = elem_bytes(in_dtype);
  for (int32_t r = 0; r < rows; ++r) {
    widen(x + int64_t(r) * cols * isz, in_dtype, cols, row);
    for (int32_t col = 0; col < cols; ++col) sum[col] += row[col];
  }
  narrow(sum, out_dtype, cols, o);
  return KV_MTIA_OK;
}

}  // namespace kevolve::emu::mtia
