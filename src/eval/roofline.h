// The roofline of a hardware profile: the fastest a kernel moving `bytes` and
// doing `flops` could possibly run, and what limits a measured run.
#pragma once

#include <string>

#include "spec/hardware_profile.h"

namespace kevolve::eval {

struct roofline_point {
  double floor_seconds = 0.0;  // max(bytes / peak bandwidth, flops / peak rate)
  double achieved_gbs = 0.0;
  double achieved_gflops = 0.0;
  double fraction = 0.0;       // floor_seconds / measured seconds
  std::string bottleneck;      // memory-bound, compute-bound, latency-bound
};

roofline_point place_on_roofline(const spec::hardware_profile& hw, double bytes, double flops, double seconds);

// Below this fraction of the roofline a kernel is limited by latency,
// occupancy or overheads rather than by bandwidth or arithmetic.
constexpr double kLatencyBoundFraction = 0.10;

}  // namespace kevolve::eval
