// The CUDA evaluator's profiling pass on a GPU: a verified kernel comes back
// with Nsight Compute's counters on its largest timed shape, the verdict is
// the one it would be without them, and a node where ncu cannot run still
// gets its verdicts. Skips without a GPU or without ncu; on the device
// machine: bench/cuda_check.sh runs it with the other GPU tests.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "common/paths.h"
#include "common/subprocess.h"
#include "eval/backends/cuda_backend.h"
#include "eval/backends/cuda_probe.h"
#include "eval/backends/ncu_profiler.h"
#include "eval/evaluator.h"
#include "support/test_env.h"

namespace kevolve::testing {
namespace {

std::string no_gpu() {
  if (!std::filesystem::exists(eval::cuda_worker_executable())) return "kevolve-cuda-worker was not built";
  auto r = run_subprocess({"nvidia-smi", "-L"}, timeout_options(std::chrono::seconds(20)));
  if (r && r->ok() && r->output.find("GPU 0") != std::string::npos) return "";
  return "no CUDA device (nvidia-smi -L found none)";
}

eval::evaluator_options options(bool ncu) {
  auto o = fast_options();
  o.call_timeout = std::chrono::milliseconds(4000);
  o.rotation_bytes = 64.0 * (1 << 20);
  o.max_sets = 16;
  o.torch_baselines = false;
  o.ncu = ncu;
  return o;
}

eval::verdict evaluate(bool ncu, const spec::hardware_profile& hw) {
  auto e = eval::evaluator::create(test_operator("t_softmax"), "fp32", options(ncu), hw);
  EXPECT_TRUE(e.has_value()) << (e ? "" : e.error().message);
  if (!e) return {};
  auto text = read_file(data_root() / "knowledge" / "examples" / "cuda" / "softmax.cu");
  EXPECT_TRUE(text.has_value());
  auto v = (*e)->evaluate(text ? *text : "");
  EXPECT_TRUE(v.has_value()) << (v ? "" : v.error().message);
  return v ? *v : eval::verdict{};
}

TEST(CudaNcu, AVerifiedKernelGetsCountersOnItsLargestTimedShape) {
  if (const std::string why = no_gpu(); !why.empty()) GTEST_SKIP() << why;
  const std::string ncu = eval::ncu::find_ncu();
  if (ncu.empty() || !std::filesystem::exists(ncu)) GTEST_SKIP() << "no Nsight Compute (ncu) on this node";
  auto hw = eval::cuda_hardware_profile(false);
  ASSERT_TRUE(hw.has_value()) << hw.error().message;
  const eval::verdict v = evaluate(true, *hw);
  ASSERT_EQ(v.result, eval::status::ok) << v.reason;
  // Both timed shapes of t_softmax move 2 MB: the first of the largest is
  // profiled, and only it.
  int profiled = 0;
  for (const auto& s : v.shapes) {
    if (s.metrics.empty()) continue;
    ++profiled;
    EXPECT_FALSE(s.holdout) << s.shape;
    EXPECT_EQ(s.profile.rfind("ncu: ", 0), 0u) << s.profile;
    EXPECT_GE(s.metrics.at("kernels"), 1) << s.profile;
    EXPECT_GT(s.metrics.at("duration_us"), 0) << s.profile;
    // The profiled call ran the same kernel the timer saw: within the
    // spread of a few microseconds of launch and replay, never 10x apart.
    EXPECT_LT(s.metrics.at("duration_us") * 1e-6, 10 * s.candidate.median_s) << s.profile;
    EXPECT_GT(s.metrics.at("duration_us") * 1e-6, 0.1 * s.candidate.median_s) << s.profile;
    ASSERT_TRUE(s.metrics.count("dram_pct")) << s.profile;
    EXPECT_GT(s.metrics.at("dram_pct"), 0) << s.profile;
    EXPECT_LE(s.metrics.at("dram_pct"), 100) << s.profile;
    std::cout << "[ncu] " << s.shape << ": " << s.profile << " (timed median " << s.candidate.median_s * 1e6
              << " us)\n";
  }
  EXPECT_EQ(profiled, 1) << "one timed shape is profiled";
  EXPECT_GT(v.overhead_phases.count("Nsight Compute profile"), 0u);
}

TEST(CudaNcu, WithoutNcuTheVerdictStandsAndSaysNothingOfCounters) {
  if (const std::string why = no_gpu(); !why.empty()) GTEST_SKIP() << why;
  auto hw = eval::cuda_hardware_profile(false);
  ASSERT_TRUE(hw.has_value()) << hw.error().message;
  ::setenv("KEVOLVE_NCU", "/nonexistent/ncu", 1);
  const eval::verdict v = evaluate(true, *hw);
  ::unsetenv("KEVOLVE_NCU");
  EXPECT_EQ(v.result, eval::status::ok) << v.reason;
  for (const auto& s : v.shapes) EXPECT_TRUE(s.metrics.empty()) << s.shape;
}

}  // namespace
}  // namespace kevolve::testing
