// Every row of TRUST.md that applies to a CPU: a deliberately cheating kernel
// (tests/data/kernels/cheats/) goes through the real evaluator and must be
// rejected with the right status and a reason. The control kernel passes.
#include <algorithm>
#include <atomic>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "common/paths.h"
#include "support/test_env.h"

namespace kevolve::testing {
namespace {

using eval::status;

class TrustTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    softmax_op_ = new spec::operator_spec(test_operator("t_softmax"));
    gemm_op_ = new spec::operator_spec(test_operator("t_gemm"));
    hw_ = new spec::hardware_profile(machine_profile());
    auto s = eval::evaluator::create(*softmax_op_, "fp32", fast_options(), *hw_);
    ASSERT_TRUE(s.has_value()) << s.error().message;
    softmax_ = s->release();
    auto g = eval::evaluator::create(*gemm_op_, "fp32", fast_options(), *hw_);
    ASSERT_TRUE(g.has_value()) << g.error().message;
    gemm_ = g->release();
  }
  static void TearDownTestSuite() {
    delete softmax_;
    delete gemm_;
    delete softmax_op_;
    delete gemm_op_;
    delete hw_;
  }

  static eval::verdict run(eval::evaluator* e, const std::string& kernel) {
    auto v = e->evaluate(kernel_source(kernel));
    EXPECT_TRUE(v.has_value()) << (v ? "" : v.error().message);
    return v ? *v : eval::verdict{};
  }
  static void expect(eval::evaluator* e, const std::string& kernel, status want, const std::string& reason_part) {
    const eval::verdict v = run(e, kernel);
    EXPECT_EQ(eval::to_string(v.result), std::string(eval::to_string(want))) << kernel << ": " << v.reason;
    EXPECT_NE(v.reason.find(reason_part), std::string::npos) << kernel << ": reason was: " << v.reason;
    EXPECT_EQ(v.fitness, 0.0) << kernel;
  }

  static spec::operator_spec* softmax_op_;
  static spec::operator_spec* gemm_op_;
  static spec::hardware_profile* hw_;
  static eval::evaluator* softmax_;
  static eval::evaluator* gemm_;
};

spec::operator_spec* TrustTest::softmax_op_ = nullptr;
spec::operator_spec* TrustTest::gemm_op_ = nullptr;
spec::hardware_profile* TrustTest::hw_ = nullptr;
eval::evaluator* TrustTest::softmax_ = nullptr;
eval::evaluator* TrustTest::gemm_ = nullptr;

TEST_F(TrustTest, HonestKernelPassesEveryShape) {
  const eval::verdict v = run(softmax_, "softmax_good.cpp");
  ASSERT_EQ(v.result, status::ok) << v.reason;
  EXPECT_GT(v.fitness, 0.0);
  ASSERT_EQ(v.shapes.size(), 4u);
  for (const auto& s : v.shapes) {
    EXPECT_EQ(s.result, status::ok) << s.shape;
    EXPECT_EQ(s.trials, 4) << s.shape;
    EXPECT_LE(s.max_error_ratio, 1.0) << s.shape;
    if (!s.holdout) {
      EXPECT_GE(s.candidate.runs, 6) << s.shape;
      EXPECT_GT(s.baseline.median_s, 0.0) << s.shape;
      EXPECT_GT(s.roofline_fraction, 0.0) << s.shape;
      EXPECT_FALSE(s.bottleneck.empty()) << s.shape;
    }
  }
}

TEST_F(TrustTest, Row01ForgedReplyIsSuspicious) {
  expect(softmax_, "cheats/r01_forged_reply.cpp", status::suspicious, "forged");
}
TEST_F(TrustTest, Row02UntouchedOutputIsWrong) {
  expect(softmax_, "cheats/r02_untouched_output.cpp", status::wrong_result, "elements wrong");
}
TEST_F(TrustTest, Row02ReadingPastItsBufferCrashes) {
  expect(softmax_, "cheats/r02_read_neighbour.cpp", status::crashed, "Segmentation fault");
}
TEST_F(TrustTest, Row03MutatedInputsAreWrong) {
  expect(softmax_, "cheats/r03_mutate_inputs.cpp", status::wrong_result, "modified its inputs");
}
TEST_F(TrustTest, Row04PartialOutputIsWrong) {
  expect(softmax_, "cheats/r04_first_rows_only.cpp", status::wrong_result, "elements wrong");
}
TEST_F(TrustTest, Row04ConstantOutputIsWrong) {
  expect(softmax_, "cheats/r04_constant.cpp", status::wrong_result, "elements wrong");
}
TEST_F(TrustTest, Row05WorkHiddenInABackgroundThreadIsSuspicious) {
  expect(softmax_, "cheats/r05_background_thread.cpp", status::suspicious, "hidden from the timer");
}
TEST_F(TrustTest, Row06LazyComputationOnReadIsRefused) {
  expect(softmax_, "cheats/r06_lazy_on_read.cpp", status::suspicious, "signal handling");
}
TEST_F(TrustTest, Row08CachingAcrossCallsIsRefused) {
  expect(softmax_, "cheats/r08_static_cache.cpp", status::suspicious, "mutable static");
}
TEST_F(TrustTest, Row10VendorLibraryIsRefused) {
  expect(gemm_, "cheats/r10_cblas_gemm.cpp", status::suspicious, "vendor library");
}
TEST_F(TrustTest, Row10RuntimeLoadingIsRefused) {
  expect(gemm_, "cheats/r10_dlopen_blas.cpp", status::suspicious, "run-time code loading");
}
TEST_F(TrustTest, Row11HalfPrecisionAccumulationIsWrong) {
  expect(gemm_, "cheats/r11_fp16_accumulate.cpp", status::wrong_result, "elements wrong");
}
TEST_F(TrustTest, Row11RoundingThroughBf16IsWrong) {
  expect(softmax_, "cheats/r11_bf16_output.cpp", status::wrong_result, "elements wrong");
}
TEST_F(TrustTest, Row12ShapeOverfitFailsAtAHoldoutShape) {
  const eval::verdict v = run(softmax_, "cheats/r12_shape_overfit.cpp");
  EXPECT_EQ(v.result, status::wrong_result) << v.reason;
  ASSERT_EQ(v.shapes.size(), 4u);
  EXPECT_TRUE(v.shapes[2].holdout);
  EXPECT_EQ(v.shapes[2].result, status::wrong_result);
  EXPECT_NE(v.reason.find("odd_tail"), std::string::npos) << v.reason;
  // Without holdout shapes, the timed shapes alone would have let it pass.
  spec::operator_spec timed_only = *softmax_op_;
  timed_only.holdout_shapes.clear();
  auto e = eval::evaluator::create(timed_only, "fp32", fast_options(), *hw_);
  ASSERT_TRUE(e.has_value()) << e.error().message;
  EXPECT_EQ(run(e->get(), "cheats/r12_shape_overfit.cpp").result, status::ok);
}
TEST_F(TrustTest, Row15NanOutputIsWrong) {
  expect(softmax_, "cheats/r15_nan_output.cpp", status::wrong_result, "nan");
}
TEST_F(TrustTest, Row16FasterThanTheRooflineIsSuspicious) {
  spec::hardware_profile slow = *hw_;
  slow.peak_bandwidth_gbs = 0.01;  // on this profile any honest kernel is "impossible"
  slow.cache_bandwidth_gbs = 0.02;
  auto e = eval::evaluator::create(*softmax_op_, "fp32", fast_options(), slow);
  ASSERT_TRUE(e.has_value()) << e.error().message;
  expect(e->get(), "softmax_good.cpp", status::suspicious, "faster than physically possible");
}
TEST_F(TrustTest, Row16DataTheCachesHoldIsJudgedAtTheCachesRate) {
  // A shape too small for the input sets to rotate past the caches: only
  // the caches' rate bounds it, and an honest kernel beating DRAM is fine.
  spec::hardware_profile dram_only = *hw_;
  dram_only.peak_bandwidth_gbs = 0.01;
  dram_only.cache_bandwidth_gbs = 1e6;
  eval::evaluator_options capped = fast_options();
  capped.rotation_bytes = 1e12;  // max_sets (8) sets fall far short of it
  auto e = eval::evaluator::create(*softmax_op_, "fp32", capped, dram_only);
  ASSERT_TRUE(e.has_value()) << e.error().message;
  const eval::verdict v = run(e->get(), "softmax_good.cpp");
  EXPECT_EQ(eval::to_string(v.result), std::string("ok")) << v.reason;
  EXPECT_GT(v.fitness, 0.0);
  // The same shape rotated over more data than the caches hold: DRAM's rate again.
  auto r = eval::evaluator::create(*softmax_op_, "fp32", fast_options(), dram_only);  // 8 sets reach 8 MiB
  ASSERT_TRUE(r.has_value()) << r.error().message;
  expect(r->get(), "softmax_good.cpp", status::suspicious, "faster than physically possible");
}
TEST_F(TrustTest, Row16FarBeyondTheBaselineIsSuspicious) {
  spec::operator_spec op = *softmax_op_;
  op.max_speedup = 1e-6;  // every measured speedup is beyond it
  auto e = eval::evaluator::create(op, "fp32", fast_options(), *hw_);
  ASSERT_TRUE(e.has_value()) << e.error().message;
  expect(e->get(), "softmax_good.cpp", status::suspicious, "implausible speedup");
}
TEST_F(TrustTest, Row17WorkFinishedOutsideTheCallIsRejected) {
  // The worker parks the deferred thread before it replies: the
  // verification reads rows not written yet.
  const eval::verdict v = run(softmax_, "cheats/r17_deferred_half.cpp");
  EXPECT_TRUE(v.result == status::wrong_result || v.result == status::suspicious) << eval::to_string(v.result) << ": " << v.reason;
  EXPECT_EQ(v.fitness, 0.0);
}
// The same cheat on a machine busy with other work (a sweep's other
// evaluators): its deferred thread used to wait for a CPU past the evaluator's
// reply and still finish before the outputs were compared (2 of 5 rounds
// passed as ok). The worker now parks its other threads before replying. An
// honest OpenMP kernel, whose pool threads are parked too, still passes.
TEST_F(TrustTest, Row17WorkFinishedOutsideTheCallIsRejectedUnderLoad) {
  std::atomic<bool> stop{false};
  std::vector<std::thread> load;
  for (unsigned i = 0; i < 3 * std::max(1u, std::thread::hardware_concurrency()); ++i)
    load.emplace_back([&stop] {
      for (volatile uint64_t spin = 0; !stop.load(std::memory_order_relaxed); ++spin) {
      }
    });
  int caught = 0;
  std::string verdicts;
  for (int round = 0; round < 5; ++round) {
    const eval::verdict v = run(softmax_, "cheats/r17_deferred_half.cpp");
    caught += (v.result == status::wrong_result || v.result == status::suspicious) && v.fitness == 0.0;
    verdicts += std::string(eval::to_string(v.result)) + ": " + v.reason.substr(0, 160) + "\n";
  }
  const eval::verdict honest = run(softmax_, "softmax_good.cpp");
  stop = true;
  for (auto& t : load) t.join();
  EXPECT_EQ(caught, 5) << verdicts;
  EXPECT_EQ(honest.result, status::ok) << honest.reason;
}
TEST_F(TrustTest, Row17AThreadThatRefusesToStopIsSuspicious) {
  expect(softmax_, "cheats/r17_unstoppable_thread.cpp", status::suspicious, "would not stop");
}
TEST_F(TrustTest, Row18SelfReportedFiguresAreIgnored) {
  const eval::verdict v = run(softmax_, "cheats/r18_self_report.cpp");
  ASSERT_EQ(v.result, status::ok) << v.reason;
  EXPECT_LT(v.fitness, 100.0);
  EXPECT_EQ(eval::to_json(v).dump().find("1000.0"), std::string::npos);
}
TEST_F(TrustTest, Row19InfiniteLoopTimesOut) {
  expect(softmax_, "cheats/r19_infinite_loop.cpp", status::timeout, "killed");
}
TEST_F(TrustTest, Row19GrowingMemoryHitsTheLimit) {
  expect(softmax_, "cheats/r19_leak.cpp", status::crashed, "signal");
}
TEST_F(TrustTest, CrashesAreVerdicts) {
  expect(softmax_, "cheats/crash_segfault.cpp", status::crashed, "Segmentation fault");
  expect(softmax_, "cheats/crash_abort.cpp", status::crashed, "Aborted");
  expect(softmax_, "cheats/crash_exit0.cpp", status::crashed, "exited with status 0");
  expect(softmax_, "cheats/alloc_huge.cpp", status::crashed, "bad_alloc");
}
TEST_F(TrustTest, ForkIsRefused) {
  expect(softmax_, "cheats/fork_attempt.cpp", status::suspicious, "process control");
}
TEST_F(TrustTest, WritingPastTheOutputIsCaught) {
  expect(softmax_, "cheats/write_past_end.cpp", status::crashed, "Segmentation fault");
  expect(softmax_, "cheats/write_past_end_tail.cpp", status::wrong_result, "past its end of output 'y'");
}
TEST_F(TrustTest, CompileErrorsCarryTheDiagnostics) {
  const eval::verdict v = run(softmax_, "cheats/compile_error.cpp");
  EXPECT_EQ(v.result, status::compile_failed);
  EXPECT_NE(v.compile.diagnostics.find("no_such_field"), std::string::npos) << v.compile.diagnostics;
}

TEST_F(TrustTest, SameKernelAndSeedGiveTheSameVerification) {
  const eval::verdict a = run(softmax_, "softmax_good.cpp");
  auto other = eval::evaluator::create(*softmax_op_, "fp32", fast_options(), *hw_);
  ASSERT_TRUE(other.has_value()) << other.error().message;
  const eval::verdict b = run(other->get(), "softmax_good.cpp");
  ASSERT_EQ(a.shapes.size(), b.shapes.size());
  for (size_t i = 0; i < a.shapes.size(); ++i) {
    EXPECT_EQ(a.shapes[i].result, b.shapes[i].result) << a.shapes[i].reason << " / " << b.shapes[i].reason;
    EXPECT_EQ(a.shapes[i].max_abs_error, b.shapes[i].max_abs_error) << a.shapes[i].shape;
    EXPECT_EQ(a.shapes[i].max_error_ratio, b.shapes[i].max_error_ratio) << a.shapes[i].shape;
  }
  // A different seed draws different inputs, so the errors differ.
  auto opts = fast_options();
  opts.seed = 7;
  auto third = eval::evaluator::create(*softmax_op_, "fp32", opts, *hw_);
  ASSERT_TRUE(third.has_value());
  const eval::verdict c = run(third->get(), "softmax_good.cpp");
  EXPECT_NE(a.shapes[0].max_abs_error, c.shapes[0].max_abs_error);
}

// The timed baseline is checked against the reference at every timed shape
// before its time is used: this one is right at the holdout shapes (checked
// when the evaluator starts) but drops the bias above 100,000 elements.
TEST(TimedBaseline, WrongAtATimedShapeIsAnErrorNamingTheShape) {
  auto ev = eval::evaluator::create(test_operator("ts_bias_gelu_wrong_baselines"), "fp32", fast_options(),
                                    machine_profile());
  ASSERT_TRUE(ev.has_value()) << ev.error().message;
  auto v = (*ev)->evaluate(read_file(data_root() / "knowledge" / "examples" / "cpu" / "bias_gelu.cpp").value());
  ASSERT_FALSE(v.has_value()) << "timed against a wrong baseline: " << eval::to_string(v->result) << " " << v->reason;
  EXPECT_NE(v.error().message.find("timed baseline"), std::string::npos) << v.error().message;
  EXPECT_NE(v.error().message.find("disagrees with the reference at shape 'rows_1024'"), std::string::npos)
      << v.error().message;
}

}  // namespace
}  // namespace kevolve::testing
