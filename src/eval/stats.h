// Order statistics of timing samples.
#pragma once

#include <cstdint>
#include <vector>

#include "eval/verdict.h"

namespace kevolve::eval {

// Percentile (0..100) by linear interpolation; 0 for no samples.
double percentile(std::vector<double> samples, double pct);

timing_stats summarize_ns(const std::vector<int64_t>& ns);

}  // namespace kevolve::eval
