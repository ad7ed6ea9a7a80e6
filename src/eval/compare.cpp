#include "eval/compare.h"

#include <cmath>
#include <cstring>
#include <sstream>
#include <type_traits>
#include <vector>
#include <algorithm>

#include "eval/generators.h"

namespace kevolve::eval {
namespace {

std::string fmt(double v) {
  std::ostringstream s;
  s.precision(9);
  s << v;
  return s.str();
}

template <class T>
inline double load(const void* p, int64_t i) {
  return double(static_cast<const T*>(p)[i]);
}

// One element: 0 pass, 1 fail. Kept branch-light so the loop vectorizes.
inline bool element_fails(double o, double e, double atol, double rtol, double& err_out, double& ratio_out) {
  if (!std::isfinite(e)) {
    const bool same = std::isnan(e) ? std::isnan(o) : o == e;
    err_out = 0;
    ratio_out = same ? 0 : INFINITY;
    return !same;
  }
  if (!std::isfinite(o)) {
    err_out = INFINITY;
    ratio_out = INFINITY;
    return true;
  }
  const double err = std::fabs(o - e);
  const double allowed = atol + rtol * std::fabs(e);
  err_out = err;
  ratio_out = allowed > 0 ? err / allowed : (err > 0 ? INFINITY : 0.0);
  return err > allowed;
}

// Fast pass over the whole tensor: how many elements fail, the largest
// error and error ratio. Any NaN or infinity, in the output or in the
// reference, counts as a failure here; the exact rules for non-finite values
// are applied by the slow pass, which runs only then.
struct partial {
  int64_t bad = 0;
  double max_err = 0;
  double max_ratio = 0;
};

inline uint64_t bits_of(double d) {
  uint64_t u;
  std::memcpy(&u, &d, sizeof u);
  return u;
}
inline double double_of(uint64_t u) {
  double d;
  std::memcpy(&d, &u, sizeof d);
  return d;
}

// Maxima of non-negative doubles are taken on their bit patterns, which
// order the same way (a NaN sorts above infinity): integer maxima vectorize
// where floating-point ones do not.
template <class O, class E>
partial scan_range(const O* o, const E* e, int64_t n, double atol, double rtol) {
  int64_t bad = 0;
  uint64_t max_err = 0, max_ratio = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double ev = double(e[i]);
    const double err = std::fabs(double(o[i]) - ev);
    const double allowed = atol + rtol * std::fabs(ev);
    bad += !(err <= allowed);
    const uint64_t eb = bits_of(err);
    max_err = eb > max_err ? eb : max_err;
    const uint64_t rb = bits_of(err / (allowed > 1e-300 ? allowed : 1e-300));
    max_ratio = rb > max_ratio ? rb : max_ratio;
  }
  partial p;
  p.bad = bad;
  p.max_err = double_of(max_err);
  p.max_ratio = double_of(max_ratio);
  return p;
}

// The common case (fp32 output, fp64 reference), compiled for the vector
// units this machine has; kevolve itself is built for any x86-64.
__attribute__((target_clones("avx512f", "avx2", "default"))) partial scan_range_f32_f64(const float* o, const double* e,
                                                                                       int64_t n, double atol,
                                                                                       double rtol) {
  return scan_range(o, e, n, atol, rtol);
}

__attribute__((target_clones("avx512f", "avx2", "default"))) partial scan_range_f32_f32(const float* o, const float* e,
                                                                                       int64_t n, double atol,
                                                                                       double rtol) {
  return scan_range(o, e, n, atol, rtol);
}

template <class O, class E>
void scan(const void* out, const void* ref, int64_t n, double atol, double rtol, compare_result& r) {
  const O* o = static_cast<const O*>(out);
  const E* e = static_cast<const E*>(ref);
  constexpr int64_t chunk = 1 << 16;
  const int64_t chunks = (n + chunk - 1) / chunk;
  std::vector<partial> parts(size_t(std::max<int64_t>(chunks, 1)));
#pragma omp parallel for schedule(static)
  for (int64_t c = 0; c < chunks; ++c) {
    const int64_t lo = c * chunk, len = std::min(chunk, n - lo);
    if constexpr (std::is_same_v<O, float> && std::is_same_v<E, double>)
      parts[size_t(c)] = scan_range_f32_f64(o + lo, e + lo, len, atol, rtol);
    else if constexpr (std::is_same_v<O, float> && std::is_same_v<E, float>)
      parts[size_t(c)] = scan_range_f32_f32(o + lo, e + lo, len, atol, rtol);
    else
      parts[size_t(c)] = scan_range(o + lo, e + lo, len, atol, rtol);
  }
  for (const partial& p : parts) {
    r.mismatches += p.bad;
    r.max_abs_error = std::max(r.max_abs_error, p.max_err);
    r.max_error_ratio = std::max(r.max_error_ratio, p.max_ratio);
  }
}

template <class O>
void scan_ref(const void* out, spec::dtype ref_type, const void* ref, int64_t n, double atol, double rtol, compare_result& r) {
  switch (ref_type) {
    case spec::dtype::f64: scan<O, double>(out, ref, n, atol, rtol, r); break;
    case spec::dtype::f32: scan<O, float>(out, ref, n, atol, rtol, r); break;
    default: break;
  }
}

// Half types are widened once per element through the ABI helpers.
struct f16_view {
  uint16_t bits;
  explicit operator double() const { return kv_f16_to_f32(bits); }
};
struct bf16_view {
  uint16_t bits;
  explicit operator double() const { return kv_bf16_to_f32(bits); }
};

}  // namespace

compare_result compare_tensor(const std::string& name, const void* out, spec::dtype out_type, const void* ref,
                              spec::dtype ref_type, int64_t n, const spec::tolerance& tol, double tol_scale) {
  compare_result r;
  const bool exact = !spec::is_float(out_type) && !spec::is_float(ref_type);
  if (exact) {
    for (int64_t i = 0; i < n; ++i) {
      const int64_t o = out_type == spec::dtype::i64 ? static_cast<const int64_t*>(out)[i] : static_cast<const int32_t*>(out)[i];
      const int64_t e = ref_type == spec::dtype::i64 ? static_cast<const int64_t*>(ref)[i] : static_cast<const int32_t*>(ref)[i];
      if (o != e) {
        if (r.mismatches++ == 0) r.first_mismatch = name + "[" + std::to_string(i) + "] = " + std::to_string(o) + ", expected " + std::to_string(e);
        r.ok = false;
        r.max_abs_error = std::max(r.max_abs_error, std::fabs(double(o) - double(e)));
        r.max_error_ratio = INFINITY;
      }
    }
    return r;
  }
  const double atol = tol.atol * tol_scale, rtol = tol.rtol * tol_scale;
  const bool fast_ref = ref_type == spec::dtype::f64 || ref_type == spec::dtype::f32;
  if (fast_ref && out_type == spec::dtype::f32) scan_ref<float>(out, ref_type, ref, n, atol, rtol, r);
  else if (fast_ref && out_type == spec::dtype::f64) scan_ref<double>(out, ref_type, ref, n, atol, rtol, r);
  else if (fast_ref && out_type == spec::dtype::f16) scan_ref<f16_view>(out, ref_type, ref, n, atol, rtol, r);
  else if (fast_ref && out_type == spec::dtype::bf16) scan_ref<bf16_view>(out, ref_type, ref, n, atol, rtol, r);
  else {
    for (int64_t i = 0; i < n; ++i) {
      double err, ratio;
      r.mismatches += element_fails(load_as_double(out, out_type, i), load_as_double(ref, ref_type, i), atol, rtol, err, ratio);
      r.max_abs_error = std::fmax(r.max_abs_error, err);
      r.max_error_ratio = std::fmax(r.max_error_ratio, ratio);
    }
  }
  if (r.mismatches > 0) {
    // Exact rules: NaN matches NaN, an infinity matches the same infinity.
    compare_result exact_r;
    for (int64_t i = 0; i < n; ++i) {
      double err, ratio;
      exact_r.mismatches += element_fails(load_as_double(out, out_type, i), load_as_double(ref, ref_type, i), atol, rtol, err, ratio);
      exact_r.max_abs_error = std::fmax(exact_r.max_abs_error, err);
      exact_r.max_error_ratio = std::fmax(exact_r.max_error_ratio, ratio);
    }
    r.mismatches = exact_r.mismatches;
    r.max_abs_error = exact_r.max_abs_error;
    r.max_error_ratio = exact_r.max_error_ratio;
  }
  r.ok = r.mismatches == 0;
  if (!r.ok) {
    // Slow pass, only on failure: describe the first bad element.
    for (int64_t i = 0; i < n; ++i) {
      const double o = load_as_double(out, out_type, i), e = load_as_double(ref, ref_type, i);
      double err, ratio;
      if (!element_fails(o, e, atol, rtol, err, ratio)) continue;
      std::string want = fmt(e);
      if (std::isfinite(e) && !std::isfinite(o)) want += " (finite)";
      else if (std::isfinite(e)) want += " ± " + fmt(atol + rtol * std::fabs(e));
      r.first_mismatch = name + "[" + std::to_string(i) + "] = " + fmt(o) + ", expected " + want;
      break;
    }
  }
  return r;
}

int64_t find_changed_byte(const char* p, size_t n, uint8_t byte) {
  for (size_t i = 0; i < n; ++i)
    if (static_cast<uint8_t>(p[i]) != byte) return int64_t(i);
  return -1;
}

}  // namespace kevolve::eval
