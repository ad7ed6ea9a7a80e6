#include "eval/roofline.h"

#include <algorithm>

namespace kevolve::eval {

roofline_point place_on_roofline(const spec::hardware_profile& hw, double bytes, double flops, double seconds) {
  roofline_point p;
  const double mem_s = bytes / (hw.peak_bandwidth_gbs * 1e9);
  const double cmp_s = flops / (hw.peak_gflops_fp32 * 1e9);
  p.floor_seconds = std::max(mem_s, cmp_s);
  if (seconds > 0) {
    p.achieved_gbs = bytes / seconds * 1e-9;
    p.achieved_gflops = flops / seconds * 1e-9;
    p.fraction = p.floor_seconds / seconds;
  }
  if (p.fraction < kLatencyBoundFraction) p.bottleneck = "latency-bound";
  else p.bottleneck = mem_s >= cmp_s ? "memory-bound" : "compute-bound";
  return p;
}

}  // namespace kevolve::eval
