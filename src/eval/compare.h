// Checks outputs against the reference: every element, within the dtype's
// tolerance; non-finite values only where the reference has them.
#pragma once

#include <cstdint>
#include <string>

#include "spec/operator_spec.h"

namespace kevolve::eval {

struct compare_result {
  bool ok = true;
  int64_t mismatches = 0;
  double max_abs_error = 0.0;
  double max_error_ratio = 0.0;  // |out-ref| / (atol + rtol*|ref|)
  std::string first_mismatch;    // "y[12] = nan, expected 0.25"
};

// `tol_scale` widens the tolerance (2 when the reference is the baseline).
compare_result compare_tensor(const std::string& name, const void* out, spec::dtype out_type, const void* ref,
                              spec::dtype ref_type, int64_t n, const spec::tolerance& tol, double tol_scale);

// First offset in [p, p+n) that does not hold `byte`, or -1.
int64_t find_changed_byte(const char* p, size_t n, uint8_t byte);

}  // namespace kevolve::eval
