// The GEMM test kernels compute the right numbers in the emulator's numerics
// (fp16 in, fp32 accumulation, fp16 out), in every variant and layout.
#include <gtest/gtest.h>

#include "gemm_setup.h"

namespace kevolve::emu::mtia::testing {
namespace {

TEST(emu_gemm, every_variant_matches_the_cpu_reference) {
  device dev(mtia2i());
  const gemm_problem pr{128, 512, 384};
  for (const tiles& t : {naive_tiles(16, 64, 128), double_buffered_tiles(16, 64, 128), broadcast_tiles(8, 32, 96),
                         tiles{16, 64, 128, 3, 1, 1}}) {
    const gemm_run r = run_gemm(dev, pr, t, true);
    ASSERT_TRUE(r.result.ok()) << r.result.message;
    EXPECT_LE(r.max_err, 1.0) << "tiles " << t.mb << "x" << t.nb << "x" << t.kb;
    EXPECT_DOUBLE_EQ(r.result.macs, 128.0 * 512 * 384);
  }
}

TEST(emu_gemm, ragged_k_and_n_tails_and_dram_operands) {
  device dev(mtia2i());
  gemm_problem pr{64, 400, 208};  // N per column 48 or 64 (not a multiple of nb), K tail of 80
  pr.b_at = level::dram;
  pr.c_at = level::dram;
  const gemm_run r = run_gemm(dev, pr, tiles{8, 32, 128, 2, 1, 0}, true);
  ASSERT_TRUE(r.result.ok()) << r.result.message;
  EXPECT_LE(r.max_err, 1.0);
  EXPECT_GT(r.result.dram_read, 0);
  EXPECT_GT(r.result.dram_write, 0);
}

TEST(emu_gemm, wrong_output_is_caught_by_the_reference_check) {
  // The comparison itself must be able to fail: corrupt one input after the
  // reference was taken and expect an error.
  device dev(mtia2i());
  std::vector<uint16_t> a = random_f16(64 * 64, 3), b = random_f16(64 * 128, 4);
  const kv_tensor ta = device_tensor(dev, level::sram, {64, 64}, KV_F16, a.data());
  const kv_tensor tb = device_tensor(dev, level::sram, {64, 128}, KV_F16, b.data());
  const kv_tensor tc = device_tensor(dev, level::sram, {64, 128}, KV_F16);
  reinterpret_cast<uint16_t*>(dev.host(addr_of(ta), 2))[0] = kv_f32_to_f16(100.0f);
  args_builder ab;
  ab.in(ta).in(tb).out(tc).param("mb", 8).param("nb", 16).param("kb", 64).param("slots", 2).param("bcast", 0)
      .param("resident_a", 0);
  ASSERT_TRUE(run_kernel(dev, gemm_kernel, ab.a).ok());
  const auto ref = gemm_reference(a, b, 64, 128, 64);
  const auto* c = reinterpret_cast<const uint16_t*>(dev.host(addr_of(tc), 64 * 128 * 2));
  EXPECT_GT(std::fabs(kv_f16_to_f32(c[0]) - ref[0]), 1.0);
}

}  // namespace
}  // namespace kevolve::emu::mtia::testing
