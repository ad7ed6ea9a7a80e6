// The mtia_emu attainable ceiling (eval/backends/mtia_emu_ceiling.h) from
// constructed profiles: never below the roofline floor, and moving with the
// launch cost, the DPE rate and the integer lanes it rests on.
#include <gtest/gtest.h>

#include "emu/mtia/params.h"
#include "eval/backends/mtia_emu_ceiling.h"
#include "eval/backends/mtia_emu_shared.h"
#include "eval/roofline.h"

namespace kevolve::testing {
namespace {

using eval::ceiling_work;
using eval::mtia_emu::attainable_ceiling;

// The roofline floor the evaluator's guard uses (mtia_emu_backend::roofline_profile).
double roofline_floor(const emu::mtia::params& p, const ceiling_work& w) {
  spec::hardware_profile hw;
  hw.peak_bandwidth_gbs = eval::mtia_emu::bandwidth_gbs(eval::mtia_emu::in_sram(w.call_bytes, p), p);
  hw.peak_gflops_fp32 = eval::mtia_emu::peak_gflops(p);
  hw.peak_gflops_matrix = hw.peak_gflops_fp32;
  return eval::place_on_roofline(hw, w.bytes, w.flops, 1.0).floor_seconds;
}

ceiling_work work(double bytes, double flops, int float_bits, double rtol = 1e-4, double int_passes = 0) {
  ceiling_work w;
  w.bytes = bytes;
  w.flops = flops;
  w.call_bytes = bytes;
  w.float_bits = float_bits;
  w.rtol = rtol;
  w.int_passes = int_passes;
  return w;
}

// conv1d seq2048_c64_k3 fp32, bf16 gemm mlp_top_256, feature_hash's prime
// table, a small bias_gelu, a call too large for SRAM.
std::vector<ceiling_work> shapes() {
  return {work((2.0 * 32 * 64 * 2048 + 64 * 64 * 3 + 64) * 4, 2.0 * 32 * 64 * 2048 * 64 * 3, 32),
          work(4096.0 * 256 * 2 + 512.0 * 256 * 2 + 4096.0 * 512 * 2, 2.0 * 4096 * 512 * 256, 16, 1e-2),
          work(16.0 * 8388608, 8388608, 0, 1, 30.0 * 8388608),
          work(8.0 * 256 * 1024, 20.0 * 256 * 1024, 32),
          work(600e6, 1e6, 32)};
}

TEST(MtiaCeiling, NeverBelowTheRooflineFloor) {
  for (const auto& p : {emu::mtia::mtia2i(), emu::mtia::mtia300()})
    for (const auto& w : shapes()) {
      const auto c = attainable_ceiling(p, w);
      ASSERT_GT(c.seconds, 0) << p.name;
      EXPECT_GE(c.seconds, roofline_floor(p, w)) << p.name << " " << c.bound;
      EXPECT_DOUBLE_EQ(c.memory_s, w.bytes / (eval::mtia_emu::bandwidth_gbs(eval::mtia_emu::in_sram(w.call_bytes, p), p) * 1e9));
      EXPECT_FALSE(c.bound.empty());
    }
}

TEST(MtiaCeiling, TheLaunchAndTheFirstRequestAreAddedOnce) {
  auto p = emu::mtia::mtia2i();
  const auto w = shapes()[0];
  const auto before = attainable_ceiling(p, w);
  EXPECT_DOUBLE_EQ(before.fixed_s, (p.launch_cycles + p.dma_descriptor_cycles + p.sram_latency_cycles) / (p.clock_ghz * 1e9));
  p.launch_cycles += 1350;
  const auto after = attainable_ceiling(p, w);
  EXPECT_NEAR(after.seconds - before.seconds, 1350 / (p.clock_ghz * 1e9), 1e-15);
  p.sram_latency_cycles += 100;
  EXPECT_NEAR(attainable_ceiling(p, w).seconds - after.seconds, 100 / (p.clock_ghz * 1e9), 1e-15);
}

TEST(MtiaCeiling, Fp32ProductsCostThreeBf16ProductsOnTheDpe) {
  auto p = emu::mtia::mtia2i();
  const auto fp32 = attainable_ceiling(p, work(1e6, 1e12, 32));
  const auto bf16 = attainable_ceiling(p, work(1e6, 1e12, 16));
  EXPECT_EQ(fp32.products, 3);
  EXPECT_EQ(bf16.products, 1);
  EXPECT_NEAR(fp32.compute_s, 3 * bf16.compute_s, 1e-15);
  EXPECT_EQ(fp32.bound, "DPE split");
  EXPECT_EQ(bf16.bound, "DPE");
  // a tolerance one bf16 product meets needs no split
  EXPECT_EQ(attainable_ceiling(p, work(1e6, 1e12, 32, eval::mtia_emu::kOneProductRtol)).products, 1);
  // half the DPE rate doubles the compute part
  p.dpe_macs_per_cycle /= 2;
  EXPECT_NEAR(attainable_ceiling(p, work(1e6, 1e12, 32)).compute_s, 2 * fp32.compute_s, 1e-15);
}

TEST(MtiaCeiling, IntegerWorkRunsOnTheSeAndVectorLanesOfEveryPe) {
  auto p = emu::mtia::mtia2i();
  const double n = 8388608;
  const auto w = work(16 * n, n, 0, 1, 30 * n);
  const auto c = attainable_ceiling(p, w);
  // 30 passes per id on 64 PEs x (32 SE + 16 vector-core lanes)
  EXPECT_NEAR(c.integer_s, 30 * n / (64 * 48) / 1.35e9, 1e-12);
  EXPECT_GT(c.integer_s, c.memory_s);
  EXPECT_EQ(c.bound, "integer engines");
  p.se_elems_per_cycle *= 2;  // 64 + 16 lanes
  EXPECT_NEAR(attainable_ceiling(p, w).integer_s, c.integer_s * 48 / 80, 1e-12);
  p.vec_bytes_per_cycle *= 2;  // 64 + 32 lanes
  EXPECT_NEAR(attainable_ceiling(p, w).integer_s, c.integer_s * 48 / 96, 1e-12);
  // no declared integer work: memory bounds the same shape
  EXPECT_EQ(attainable_ceiling(p, work(16 * n, n, 0, 1, 0)).bound, "memory (SRAM)");
}

TEST(MtiaCeiling, BoundNamesTheLaunchWhereItIsAFifthOrMore) {
  const auto p = emu::mtia::mtia2i();
  const double cycle = 1 / 1.35e9;
  auto bytes_for = [&](double cycles) { return cycles * p.sram_bytes_per_cycle; };  // SRAM-resident
  EXPECT_EQ(attainable_ceiling(p, work(bytes_for(500), 0, 32)).bound, "launch");
  EXPECT_EQ(attainable_ceiling(p, work(bytes_for(4194), 0, 32)).bound, "launch + memory (SRAM)");
  const auto big = attainable_ceiling(p, work(bytes_for(100000), 0, 32));
  EXPECT_EQ(big.bound, "memory (SRAM)");
  EXPECT_NEAR(big.seconds, (100000 + 1520) * cycle, 1e-12);
  const auto dram = attainable_ceiling(p, work(600e6, 0, 32));
  EXPECT_EQ(dram.bound, "memory (DRAM)");
}

}  // namespace
}  // namespace kevolve::testing
