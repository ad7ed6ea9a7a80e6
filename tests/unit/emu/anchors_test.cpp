// The published anchors (mtia.md 6.6) for well-written kernels, and the
// hard roofline invariant on the same runs.
#include <gtest/gtest.h>

#include <cstdio>

#include "gemm_setup.h"

namespace kevolve::emu::mtia::testing {
namespace {

TEST(emu_anchor, gemm_2048_cubed_from_sram_runs_at_92_to_95_percent_of_dpe_peak) {
  device dev(mtia2i());
  const gemm_problem pr{2048, 2048, 2048};
  const gemm_run r = run_gemm(dev, pr, broadcast_tiles(128, 128, 256), false);
  ASSERT_TRUE(r.result.ok()) << r.result.message;
  const params& p = dev.config();
  const double ideal = 2.0 * 2048 * 2048 * 2048 / p.peak_flops_per_cycle();
  const double eff = ideal / r.result.cycles;
  std::printf("2048^3 fp16 GEMM from SRAM: %.1f us, %.1f%% of DPE peak, bound %s\n%s", r.result.us, 100 * eff,
              to_string(r.result.bound), r.result.summary().c_str());
  EXPECT_GE(eff, 0.92);
  EXPECT_LE(eff, 0.95);
  EXPECT_EQ(r.result.bound, bound_class::compute);
  EXPECT_GE(r.result.cycles, r.result.lower_bound_cycles(p));
}

TEST(emu_anchor, weight_in_dram_gemm_reaches_over_95_percent_of_dram_bandwidth) {
  device dev(mtia2i());
  gemm_problem pr{512, 26592, 2048};
  pr.b_at = level::dram;
  const gemm_run r = run_gemm(dev, pr, tiles{64, 64, 256, 3, 1, 1}, false);
  ASSERT_TRUE(r.result.ok()) << r.result.message;
  const params& p = dev.config();
  const double weight_bytes = 2048.0 * 26592 * 2;
  const double frac = weight_bytes / r.result.cycles / p.dram_bytes_per_cycle;  // of the 204.8 GB/s peak
  std::printf("512x26592x2048 weights in DRAM: %.1f us, %.1f%% of DRAM bandwidth, bound %s\n%s", r.result.us,
              100 * frac, to_string(r.result.bound), r.result.summary().c_str());
  EXPECT_GT(frac, 0.95);
  EXPECT_EQ(r.result.bound, bound_class::dram);
  EXPECT_NEAR(r.result.dram_read, weight_bytes, 1.0);  // broadcast: every weight byte read once
  EXPECT_GE(r.result.cycles, r.result.lower_bound_cycles(p));
}

}  // namespace
}  // namespace kevolve::emu::mtia::testing
