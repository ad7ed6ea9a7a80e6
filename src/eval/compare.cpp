#include "eval/compare.h"

#include <cmath>
#include <cstring>
#include <sstream>

#include "eval/generators.h"

namespace kevolve::eval {

compare_result compare_tensor(const std::string& name, const void* out, spec::dtype out_type, const void* ref,
                              spec::dtype ref_type, int64_t n, const spec::tolerance& tol, double tol_scale) {
  compare_result r;
  const bool exact = !spec::is_float(out_type) && !spec::is_float(ref_type);
  auto note = [&](int64_t i, const std::string& got, const std::string& want) {
    if (r.mismatches++ == 0) r.first_mismatch = name + "[" + std::to_string(i) + "] = " + got + ", expected " + want;
    r.ok = false;
  };
  auto fmt = [](double v) {
    std::ostringstream s;
    s.precision(9);
    s << v;
    return s.str();
  };
  if (exact) {
    for (int64_t i = 0; i < n; ++i) {
      const int64_t o = out_type == spec::dtype::i64 ? static_cast<const int64_t*>(out)[i] : static_cast<const int32_t*>(out)[i];
      const int64_t e = ref_type == spec::dtype::i64 ? static_cast<const int64_t*>(ref)[i] : static_cast<const int32_t*>(ref)[i];
      if (o != e) {
        note(i, std::to_string(o), std::to_string(e));
        r.max_abs_error = std::max(r.max_abs_error, std::fabs(double(o) - double(e)));
        r.max_error_ratio = INFINITY;
      }
    }
    return r;
  }
  const double atol = tol.atol * tol_scale, rtol = tol.rtol * tol_scale;
  for (int64_t i = 0; i < n; ++i) {
    const double o = load_as_double(out, out_type, i);
    const double e = load_as_double(ref, ref_type, i);
    if (!std::isfinite(e)) {
      const bool same = std::isnan(e) ? std::isnan(o) : o == e;
      if (!same) {
        note(i, fmt(o), fmt(e));
        r.max_error_ratio = INFINITY;
      }
      continue;
    }
    if (!std::isfinite(o)) {
      note(i, fmt(o), fmt(e) + " (finite)");
      r.max_abs_error = INFINITY;
      r.max_error_ratio = INFINITY;
      continue;
    }
    const double err = std::fabs(o - e);
    const double allowed = atol + rtol * std::fabs(e);
    r.max_abs_error = std::max(r.max_abs_error, err);
    const double ratio = allowed > 0 ? err / allowed : (err > 0 ? INFINITY : 0.0);
    r.max_error_ratio = std::max(r.max_error_ratio, ratio);
    if (err > allowed) note(i, fmt(o), fmt(e) + " ± " + fmt(allowed));
  }
  return r;
}

int64_t find_changed_byte(const char* p, size_t n, uint8_t byte) {
  for (size_t i = 0; i < n; ++i)
    if (static_cast<uint8_t>(p[i]) != byte) return int64_t(i);
  return -1;
}

}  // namespace kevolve::eval
