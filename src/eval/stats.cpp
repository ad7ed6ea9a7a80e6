#include "eval/stats.h"

#include <algorithm>

namespace kevolve::eval {

double percentile(std::vector<double> s, double pct) {
  if (s.empty()) return 0.0;
  std::sort(s.begin(), s.end());
  const double pos = pct / 100.0 * double(s.size() - 1);
  const size_t lo = size_t(pos);
  const size_t hi = std::min(lo + 1, s.size() - 1);
  const double frac = pos - double(lo);
  return s[lo] * (1.0 - frac) + s[hi] * frac;
}

timing_stats summarize_ns(const std::vector<int64_t>& ns) {
  std::vector<double> s;
  s.reserve(ns.size());
  for (int64_t v : ns) s.push_back(double(v) * 1e-9);
  timing_stats t;
  t.runs = int(s.size());
  t.median_s = percentile(s, 50);
  t.p10_s = percentile(s, 10);
  t.p90_s = percentile(s, 90);
  return t;
}

}  // namespace kevolve::eval
