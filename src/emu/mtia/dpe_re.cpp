// Dot-product engine (B-cache + streamed A into fp32 accumulators) and the
// reduction engine (drain through the SE, neighbour send/receive, min/max).
#include <algorithm>
#include <cmath>
#include <vector>

#include "emu/mtia/device.h"
#include "emu/mtia/host_kernels.h"
#include "emu/mtia/numerics.h"
#include "emu/mtia/ops.h"

namespace kevolve::emu::mtia {

namespace {
std::string at(const pe_state& pe, const char* what) { return "pe " + std::to_string(pe.id) + ": " + what + ": "; }

// The drain's SE pass on a whole tile: tile = src (+ bias[j] per column),
// then se_op per element; the same fp32 operations per element as row by
// row, vectorised for the host.
__attribute__((target_clones("avx512f", "avx2", "default"))) void drain_tile(const float* src, const float* bias,
                                                                            int32_t rows, int32_t cols,
                                                                            int32_t se_op, float* tile) {
  const size_t n = size_t(rows) * cols;
  if (bias) {
    for (int32_t i = 0; i < rows; ++i)
      for (int32_t j = 0; j < cols; ++j) tile[size_t(i) * cols + j] = src[size_t(i) * cols + j] + bias[j];
  } else {
    std::copy(src, src + n, tile);
  }
  apply_unary_row(se_op, tile, static_cast<int32_t>(n));
}
}  // namespace

int device::acc_alloc(int32_t rows, int32_t cols) {
  pe_state* pe = current_pe("kv_mtia_acc_alloc");
  if (!pe) return -result_.status;
  if (rows < 1 || cols < 1) return -fail(KV_MTIA_ERR_ARG, at(*pe, "kv_mtia_acc_alloc") + "rows and cols must be >= 1");
  const uint64_t bytes = uint64_t(rows) * uint64_t(cols) * 4;
  if (pe->acc_used * 4 + bytes > p_.re_acc_bytes)
    return -fail(KV_MTIA_ERR_CAPACITY, at(*pe, "kv_mtia_acc_alloc") + "accumulators need " +
                                           std::to_string(pe->acc_used * 4 + bytes) + " bytes, the RE holds " +
                                           std::to_string(static_cast<uint64_t>(p_.re_acc_bytes)));
  acc_state a;
  a.rows = rows;
  a.cols = cols;
  a.offset = pe->acc_used;
  pe->acc_used += uint64_t(rows) * cols;
  if (functional_ && pe->acc_pool.size() < pe->acc_used) pe->acc_pool.resize(pe->acc_used);
  pe->accs.push_back(a);
  return static_cast<int>(pe->accs.size() - 1);
}

int device::dpe_load_b(int32_t cb, int32_t k, int32_t n, int32_t dtype, uint32_t flags) {
  const char* what = "kv_mtia_dpe_load_b";
  pe_state* pe = current_pe(what);
  if (!pe) return result_.status;
  if (dtype != KV_F16 && dtype != KV_BF16) return fail(KV_MTIA_ERR_ARG, at(*pe, what) + "dtype must be KV_F16 or KV_BF16");
  if (k < 1 || n < 1) return fail(KV_MTIA_ERR_ARG, at(*pe, what) + "k and n must be >= 1");
  const int64_t bytes = int64_t(k) * n * 2;
  if (bytes > p_.dpe_bcache_bytes)
    return fail(KV_MTIA_ERR_CAPACITY, at(*pe, what) + std::to_string(k) + " x " + std::to_string(n) +
                                          " needs " + std::to_string(bytes) + " bytes, the B-cache holds " +
                                          std::to_string(static_cast<int64_t>(p_.dpe_bcache_bytes)));
  command* c = record(*pe, op_load_b, dpe, std::ceil(double(bytes) / p_.ls_bytes_per_cycle));
  if (!c) return result_.status;
  const uint32_t idx = static_cast<uint32_t>(pe->trace.size() - 1);
  const uint8_t* src = cb_read(*pe, cb, dpe, bytes, flags, idx, dep_in0, what);
  if (failed()) return result_.status;
  pe->b_k = k;
  pe->b_n = n;
  pe->b_dtype = dtype;
  if (src) {
    pe->bcache.resize(size_t(k) * n);
    widen(src, dtype, int64_t(k) * n, pe->bcache.data());
  }
  return KV_MTIA_OK;
}

int device::dpe_mm(int32_t cb_a, int32_t m, int32_t k, int32_t lda, int32_t acc, uint32_t flags) {
  const char* what = "kv_mtia_dpe_mm";
  pe_state* pe = current_pe(what);
  if (!pe) return result_.status;
  if (pe->b_dtype < 0) return fail(KV_MTIA_ERR_ARG, at(*pe, what) + "no B tile cached (kv_mtia_dpe_load_b first)");
  if (m < 1 || k != pe->b_k || lda < k)
    return fail(KV_MTIA_ERR_ARG, at(*pe, what) + "needs m >= 1, k equal to the cached B's k (" + std::to_string(pe->b_k) +
                                     ") and lda >= k");
  acc_state* a = check_acc(*pe, acc, what);
  if (!a) return result_.status;
  const int32_t n = pe->b_n;
  if (a->rows != m || a->cols != n)
    return fail(KV_MTIA_ERR_ARG, at(*pe, what) + "accumulator is " + std::to_string(a->rows) + " x " +
                                     std::to_string(a->cols) + ", the product is " + std::to_string(m) + " x " +
                                     std::to_string(n));
  mm_cost& cost = mm_cost_;  // kernels repeat one shape: its cycles once (three divisions)
  if (cost.m != m || cost.k != k || cost.n != n) {
    const double t = p_.dpe_tile;
    const double steps = m * std::ceil(k / t) * std::ceil(n / t);
    cost = mm_cost{m, k, n, steps * t * t / p_.dpe_macs_per_cycle + p_.dpe_pipeline_cycles};
  }
  command* c = record(*pe, op_mm, dpe, cost.cycles);
  if (!c) return result_.status;
  const uint32_t idx = static_cast<uint32_t>(pe->trace.size() - 1);
  const uint8_t* src = cb_read(*pe, cb_a, dpe, (int64_t(m) - 1) * lda * 2 + int64_t(k) * 2, flags & KV_CB_KEEP, idx,
                               dep_in0, what);
  if (failed()) return result_.status;
  acc_deps(*c, *a);
  a->last_write = cmd_ref{static_cast<uint32_t>(pe->id), idx};
  result_.macs += double(m) * k * n;
  if (!src) return KV_MTIA_OK;
  float* out = pe->acc_pool.data() + a->offset;
  const float* b = pe->bcache.data();
  std::vector<float>& arows = pe->scratch;
  if (arows.size() < size_t(m) * k) arows.resize(size_t(m) * k);
  if (lda == k) widen(src, pe->b_dtype, int64_t(m) * k, arows.data());  // rows back to back: one pass
  else
    for (int32_t i = 0; i < m; ++i) widen(src + int64_t(i) * lda * 2, pe->b_dtype, k, arows.data() + size_t(i) * k);
  if (flags & KV_MM_ZERO) std::fill(out, out + size_t(m) * n, 0.0f);
  mm_tile(arows.data(), b, m, k, n, out);
  return KV_MTIA_OK;
}

int device::re_drain(int32_t acc, int32_t cb_out, int32_t out_dtype, int32_t se_op, int32_t cb_bias,
                     uint32_t bias_flags) {
  const char* what = "kv_mtia_re_drain";
  pe_state* pe = current_pe(what);
  if (!pe) return result_.status;
  acc_state* a = check_acc(*pe, acc, what);
  if (!a) return result_.status;
  if (!is_float(out_dtype) || !is_unary(se_op))
    return fail(KV_MTIA_ERR_ARG, at(*pe, what) + "out_dtype must be a float type and se_op a unary op");
  const double elems = double(a->rows) * a->cols;
  const bool uses_se = se_op != KV_OP_COPY || cb_bias >= 0;
  double work = elems * 4 / p_.re_bytes_per_cycle;
  if (uses_se) work = std::max(work, elems / (is_lut(se_op) ? p_.se_lut_elems_per_cycle : p_.se_elems_per_cycle));
  command* c = record(*pe, op_drain, re, std::ceil(work));
  if (!c) return result_.status;
  if (uses_se) c->eng2 = se;
  const uint32_t idx = static_cast<uint32_t>(pe->trace.size() - 1);
  const uint8_t* bias = nullptr;
  if (cb_bias >= 0) {
    bias = cb_read(*pe, cb_bias, re, int64_t(a->cols) * 4, bias_flags, idx, dep_in0, what);
    if (failed()) return result_.status;
  }
  uint8_t* dst = cb_write(*pe, cb_out, re, int64_t(elems) * elem_bytes(out_dtype), idx, what);
  if (failed()) return result_.status;
  c = &pe->trace[idx];
  acc_deps(*c, *a);
  a->last_read = cmd_ref{static_cast<uint32_t>(pe->id), idx};
  if (!dst) return KV_MTIA_OK;
  const float* src = pe->acc_pool.data() + a->offset;
  const int32_t cols = a->cols;
  const size_t n = size_t(a->rows) * cols;
  std::vector<float>& scratch = pe->scratch;
  if (scratch.size() < n + cols) scratch.resize(n + cols);
  float* tile = scratch.data();  // the whole tile at once: the same per-element ops as row by row
  float* b = tile + n;
  if (bias) widen(bias, KV_F32, cols, b);
  drain_tile(src, bias ? b : nullptr, a->rows, cols, se_op, tile);
  narrow(tile, out_dtype, int64_t(n), dst);
  return KV_MTIA_OK;
}

int device::re_minmax(int32_t acc, int32_t cb_out) {
  const char* what = "kv_mtia_re_minmax";
  pe_state* pe = current_pe(what);
  if (!pe) return result_.status;
  acc_state* a = check_acc(*pe, acc, what);
  if (!a) return result_.status;
  command* c = record(*pe, op_minmax, re, std::ceil(double(a->rows) * a->cols * 4 / p_.re_bytes_per_cycle));
  if (!c) return result_.status;
  const uint32_t idx = static_cast<uint32_t>(pe->trace.size() - 1);
  uint8_t* dst = cb_write(*pe, cb_out, re, int64_t(a->rows) * 8, idx, what);
  if (failed()) return result_.status;
  acc_deps(pe->trace[idx], *a);
  a->last_read = cmd_ref{static_cast<uint32_t>(pe->id), idx};
  if (!dst) return KV_MTIA_OK;
  const float* src = pe->acc_pool.data() + a->offset;
  for (int32_t i = 0; i < a->rows; ++i) {
    const float* r = src + size_t(i) * a->cols;
    store_f(dst, KV_F32, 2 * i, *std::min_element(r, r + a->cols));
    store_f(dst, KV_F32, 2 * i + 1, *std::max_element(r, r + a->cols));
  }
  return KV_MTIA_OK;
}

}  // namespace kevolve::emu::mtia
