// The mtia_emu backend against TRUST.md: cheating kernels (static and at run
// time in the emulator), honest examples and the emulated-time verdict. Small
// shapes (tests/data/operators/ts_*.yaml); no GPU or accelerator needed.
#include <cstdio>

#include <gtest/gtest.h>

#include "common/paths.h"
#include "eval/backends/mtia_emu_backend.h"
#include "support/test_env.h"

namespace kevolve::testing {
namespace {

using eval::status;

spec::hardware_profile mtia_profile() {
  auto hw = eval::mtia_hardware_profile();
  EXPECT_TRUE(hw.has_value()) << (hw ? "" : hw.error().message);
  return hw ? *hw : spec::hardware_profile{};
}

std::string example(const std::string& op) {
  auto text = read_file(data_root() / "knowledge" / "examples" / "mtia_emu" / (op + ".cpp"));
  EXPECT_TRUE(text.has_value()) << op;
  return text ? *text : "";
}

class MtiaTrust : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto ev = eval::evaluator::create(test_operator("ts_bias_gelu"), "fp32", fast_options(), mtia_profile());
    ASSERT_TRUE(ev.has_value()) << ev.error().message;
    ev_ = std::move(*ev);
  }
  static void TearDownTestSuite() { ev_.reset(); }
  eval::verdict run(const std::string& source) {
    auto v = ev_->evaluate(source);
    EXPECT_TRUE(v.has_value()) << (v ? "" : v.error().message);
    return v ? *v : eval::verdict{};
  }
  void expect(const std::string& cheat, status want, const std::string& reason_part) {
    const auto v = run(kernel_source("cheats/mtia_emu/" + cheat));
    EXPECT_EQ(eval::to_string(v.result), std::string(eval::to_string(want))) << cheat << ": " << v.reason;
    EXPECT_NE(v.reason.find(reason_part), std::string::npos) << cheat << ": reason was: " << v.reason;
  }
  static std::unique_ptr<eval::evaluator> ev_;
};
std::unique_ptr<eval::evaluator> MtiaTrust::ev_;

TEST_F(MtiaTrust, HonestKernelGetsEmulatedTimeRooflineAndProfile) {
  const auto v = run(example("bias_gelu"));
  ASSERT_EQ(eval::to_string(v.result), std::string("ok")) << v.reason;
  EXPECT_EQ(v.backend, "mtia_emu");
  for (const auto& s : v.shapes) {
    if (s.holdout) continue;
    // Emulated microseconds, not wall time: a 256x1024 fp32 call takes
    // about a microsecond on the chip and far longer to emulate.
    EXPECT_GT(s.candidate.median_s, 0.5e-6);
    EXPECT_LT(s.candidate.median_s, 50e-6);
    EXPECT_GT(s.roofline_fraction, 0.0);
    EXPECT_LE(s.roofline_fraction, 1.0 / 0.5);
    EXPECT_NE(s.profile.find("bound:"), std::string::npos) << s.profile;
    EXPECT_NE(s.profile.find("tensors in SRAM"), std::string::npos) << s.profile;
    // The engines' busy shares as metrics (what rules and prompts read),
    // the same figures as the profile line: bias_gelu streams through the
    // fabric interface and the SE and vector core; the DPE has nothing to do.
    for (const char* e : {"fi_in", "fi_out", "dpe", "re", "se", "vec", "mlu"}) {
      const auto m = s.metrics.find(std::string(e) + "_pct");
      ASSERT_NE(m, s.metrics.end()) << e;
      char text[32];
      std::snprintf(text, sizeof text, " %s %.0f%%", e, m->second);
      EXPECT_NE(s.profile.find(text), std::string::npos) << text << " in " << s.profile;
    }
    EXPECT_GT(s.metrics.at("fi_in_pct"), 10.0) << s.profile;
    EXPECT_GT(s.metrics.at("se_pct") + s.metrics.at("vec_pct"), 10.0) << s.profile;
    EXPECT_EQ(s.metrics.at("dpe_pct"), 0.0) << s.profile;
    // Why engines waited, as shares of all their waiting: one per reason,
    // summing to 100; a streaming kernel's engines wait for their inputs.
    double waited = 0;
    for (const char* why : {"issue", "input", "output", "dma_latency", "bandwidth", "barrier"}) {
      const auto m = s.metrics.find(std::string("wait_") + why + "_pct");
      ASSERT_NE(m, s.metrics.end()) << why << " in " << s.profile;
      waited += m->second;
    }
    EXPECT_NEAR(waited, 100.0, 1e-6) << s.profile;
    EXPECT_GT(s.metrics.at("wait_input_pct"), 0.0) << s.profile;
    EXPECT_NE(s.profile.find("engines waited for: issue"), std::string::npos) << s.profile;
    // Load imbalance: the example splits its elements evenly over the PEs.
    ASSERT_EQ(s.metrics.count("imbalance_pct"), 1u) << s.profile;
    EXPECT_GE(s.metrics.at("imbalance_pct"), 0.0) << s.profile;
    EXPECT_LT(s.metrics.at("imbalance_pct"), 5.0) << s.profile;
    EXPECT_NE(s.profile.find("(load imbalance):"), std::string::npos) << s.profile;
    // Memory bandwidth unused: the first request and the tail after the last
    // read are part of it; what the profile line says the metrics hold.
    for (const char* k : {"mem_unused_pct", "mem_unused_head_pct", "mem_unused_tail_pct"})
      ASSERT_EQ(s.metrics.count(k), 1u) << k;
    EXPECT_GT(s.metrics.at("mem_unused_head_pct"), 0.0) << s.profile;
    EXPECT_GT(s.metrics.at("mem_unused_tail_pct"), 0.0) << s.profile;
    EXPECT_GE(s.metrics.at("mem_unused_pct"),
              s.metrics.at("mem_unused_head_pct") + s.metrics.at("mem_unused_tail_pct") - 1e-9);
    EXPECT_LT(s.metrics.at("mem_unused_pct"), 100.0) << s.profile;
    char unused[64];
    std::snprintf(unused, sizeof unused, "memory bandwidth unused: %.1f%% of the run", s.metrics.at("mem_unused_pct"));
    EXPECT_NE(s.profile.find(unused), std::string::npos) << unused << " in " << s.profile;
  }
  // Deterministic: the same kernel gets the same time again.
  const auto again = run(example("bias_gelu"));
  ASSERT_EQ(again.shapes.size(), v.shapes.size());
  EXPECT_EQ(again.shapes[0].candidate.median_s, v.shapes[0].candidate.median_s);
}

TEST_F(MtiaTrust, HostComputeThroughTensorPointersFaults) {
  expect("host_deref.cpp", status::crashed, "signal");
}
TEST_F(MtiaTrust, EmulatorInternalsAreRefused) {
  expect("emulator_internals.cpp", status::suspicious, "emulator internals");
  expect("api_table.cpp", status::suspicious, "emulator internals");
}
TEST_F(MtiaTrust, PointerReinterpretationIsRefused) {
  expect("pointer_cast.cpp", status::suspicious, "pointer reinterpretation");
}
TEST_F(MtiaTrust, ClockAccessIsRefused) { expect("reads_clock.cpp", status::suspicious, "clock"); }
TEST_F(MtiaTrust, CachingAcrossCallsIsRefused) { expect("static_cache.cpp", status::suspicious, "mutable static"); }
TEST_F(MtiaTrust, NoLaunchLeavesPoisonedOutputs) { expect("no_launch.cpp", status::wrong_result, "elements wrong"); }
TEST_F(MtiaTrust, PartialWorkIsWrong) { expect("first_rows_only.cpp", status::wrong_result, "elements wrong"); }
TEST_F(MtiaTrust, WritingAnInputThroughDmaIsCaught) { expect("write_input.cpp", status::wrong_result, "input"); }
// TRUST row 17, as on the cpu (trust_test.cpp): the worker parks the threads
// a kernel left running before it replies; one that will not stop is hidden
// work.
TEST_F(MtiaTrust, Row17WorkFinishedOutsideTheCallIsRejected) {
  const auto v = run(kernel_source("cheats/mtia_emu/r17_deferred_half.cpp"));
  const bool wrong = v.result == status::wrong_result && v.reason.find("elements wrong") != std::string::npos;
  const bool hidden = v.result == status::suspicious && v.reason.find("would not stop") != std::string::npos;
  EXPECT_TRUE(wrong || hidden) << eval::to_string(v.result) << ": " << v.reason;
  EXPECT_EQ(v.fitness, 0.0);
}
TEST_F(MtiaTrust, Row17AThreadThatRefusesToStopIsSuspicious) {
  expect("r17_unstoppable_thread.cpp", status::suspicious, "would not stop");
}
TEST_F(MtiaTrust, PeekingPastWhatADmaWroteFails) {
  expect("peek_past_dma.cpp", status::runtime_failed, "outside the 32 bytes its producer wrote");
}
TEST_F(MtiaTrust, ProbingForTimingOnlyRunsGainsNothing) {
  const auto v = run(kernel_source("cheats/mtia_emu/probe_timing_mode.cpp"));
  ASSERT_EQ(eval::to_string(v.result), std::string("ok")) << v.reason;
  for (const auto& s : v.shapes) {
    if (s.holdout) continue;
    // all of its work on one PE: far slower than the 64-PE baseline, within the roofline
    EXPECT_LT(s.speedup, 0.5) << s.shape;
    EXPECT_LE(s.roofline_fraction, 1.0) << s.shape;
  }
}

// A data-dependent kernel (embedding bags: its gathers follow the offsets)
// takes different emulated times on different input sets. Both sides are
// timed on every verification set and the median is the shape's time, so
// the verdict does not depend on which set a random draw picked: two
// evaluations agree to the cycle, on as many calls as there are sets.
TEST(MtiaBackend, DataDependentTimesAreTheMedianOverEverySet) {
  const auto opts = fast_options();
  std::vector<eval::shape_verdict> first;
  for (int round = 0; round < 2; ++round) {
    auto ev = eval::evaluator::create(test_operator("ts_embedding_bag_sum"), "fp32", opts, mtia_profile());
    ASSERT_TRUE(ev.has_value()) << ev.error().message;
    auto v = (*ev)->evaluate(example("embedding_bag_sum"));
    ASSERT_TRUE(v.has_value()) << v.error().message;
    ASSERT_EQ(eval::to_string(v->result), std::string("ok")) << v->reason;
    std::vector<eval::shape_verdict> timed;
    for (const auto& s : v->shapes)
      if (!s.holdout) timed.push_back(s);
    ASSERT_FALSE(timed.empty());
    for (const auto& s : timed) {
      EXPECT_EQ(s.candidate.runs, opts.verify_trials) << s.shape;
      EXPECT_EQ(s.baseline.runs, opts.verify_trials) << s.shape;
    }
    if (round == 0) {
      first = timed;
      continue;
    }
    ASSERT_EQ(timed.size(), first.size());
    for (size_t i = 0; i < timed.size(); ++i) {
      EXPECT_EQ(timed[i].candidate.median_s, first[i].candidate.median_s) << timed[i].shape;
      EXPECT_EQ(timed[i].baseline.median_s, first[i].baseline.median_s) << timed[i].shape;
    }
  }
}

TEST(MtiaBackend, UnknownProfileIsAClearError) {
  ::setenv("KEVOLVE_MTIA_PROFILE", "no_such_chip", 1);
  auto hw = eval::mtia_hardware_profile();
  ::unsetenv("KEVOLVE_MTIA_PROFILE");
  ASSERT_FALSE(hw.has_value());
  EXPECT_NE(hw.error().message.find("no_such_chip"), std::string::npos) << hw.error().message;
}

TEST(MtiaBackend, OperatorWithoutMtiaBaselineIsRefusedWithItsKey) {
  auto ev = eval::evaluator::create(test_operator("ts_silu"), "", fast_options(), mtia_profile());
  ASSERT_FALSE(ev.has_value());
  EXPECT_NE(ev.error().message.find("mtia_baseline"), std::string::npos) << ev.error().message;
}

// A wrong mtia_baseline (ReLU for GELU) is caught before its time is used.
TEST(MtiaBackend, WrongTimedBaselineIsAnError) {
  auto ev = eval::evaluator::create(test_operator("ts_bias_gelu_wrong_baselines"), "fp32", fast_options(), mtia_profile());
  ASSERT_TRUE(ev.has_value()) << ev.error().message;
  auto v = (*ev)->evaluate(example("bias_gelu"));
  ASSERT_FALSE(v.has_value()) << "timed against a wrong baseline: " << eval::to_string(v->result) << " " << v->reason;
  EXPECT_NE(v.error().message.find("timed baseline of operator 'ts_bias_gelu_wrong_baselines' (mtia_emu"),
            std::string::npos)
      << v.error().message;
  EXPECT_NE(v.error().message.find("disagrees with the reference"), std::string::npos) << v.error().message;
}

// Every example in knowledge/examples/mtia_emu passes at the small shapes.
class MtiaExamples : public ::testing::TestWithParam<std::string> {};
TEST_P(MtiaExamples, PassTheEvaluator) {
  // gemm_bias_relu's example is bf16 (the DPE's type): its test operator has only that variant.
  const std::string op = GetParam() == "gemm_bias_relu" ? "ts_gemm_bias_relu_bf16" : "ts_" + GetParam();
  auto ev = eval::evaluator::create(test_operator(op), "", fast_options(), mtia_profile());
  ASSERT_TRUE(ev.has_value()) << ev.error().message;
  auto v = (*ev)->evaluate(example(GetParam()));
  ASSERT_TRUE(v.has_value()) << v.error().message;
  EXPECT_EQ(eval::to_string(v->result), std::string("ok")) << v->reason;
  // The attainable ceiling beside the roofline: at least the roofline floor,
  // and no honest kernel (these are the best known) runs below it.
  for (const auto& s : v->shapes) {
    if (s.holdout) continue;
    EXPECT_GE(s.attainable_fraction, s.roofline_fraction) << s.shape;
    EXPECT_GT(s.attainable_fraction, 0.0) << s.shape;
    EXPECT_LE(s.attainable_fraction, 1.0) << s.shape << ": faster than the ceiling (" << s.bound << ")";
    EXPECT_FALSE(s.bound.empty()) << s.shape;
  }
}

// feature_hash declares its integer work (`int_passes`): at n256k the 30
// passes per id on the SE's and vector core's lanes take longer than its
// bytes, so the ceiling names the integer engines (and the launch: 1520 of
// about 4100 cycles) and sits above the roofline, which counts bytes only.
TEST(MtiaBackend, IntegerWorkBoundsTheCeilingOfPrimeTables) {
  auto ev = eval::evaluator::create(test_operator("ts_feature_hash"), "", fast_options(), mtia_profile());
  ASSERT_TRUE(ev.has_value()) << ev.error().message;
  auto v = (*ev)->evaluate(example("feature_hash"));
  ASSERT_TRUE(v.has_value()) << v.error().message;
  ASSERT_EQ(eval::to_string(v->result), std::string("ok")) << v->reason;
  const auto& s = v->shapes.front();
  ASSERT_FALSE(s.holdout);
  EXPECT_EQ(s.bound, "launch + integer engines");
  EXPECT_GT(s.attainable_fraction, 1.15 * s.roofline_fraction);
  EXPECT_LE(s.attainable_fraction, 1.0);
}

// The ceiling holds fp32 products to three bf16 products (the cheapest split
// that meets an fp32 tolerance): a conv1d kernel that makes one is wrong.
TEST(MtiaBackend, OneBf16ProductPerFp32ProductFailsTheTolerance) {
  auto ev = eval::evaluator::create(test_operator("ts_conv1d"), "", fast_options(), mtia_profile());
  ASSERT_TRUE(ev.has_value()) << ev.error().message;
  // The cheat: the conv1d example with the lo parts of its bf16x3 split
  // zeroed (lo = 0 * rem), so every fp32 product carries one bf16 product's
  // precision, what a kernel below the ceiling's compute part would compute.
  std::string cheat = example("conv1d");
  const std::string lo = "kv_mtia_se_unary(d, KV_OP_COPY, rem, KV_CB_POP, lo, rows, cols, KV_F32, KV_BF16, 1.0f, 0.0f);";
  const size_t at = cheat.find(lo);
  ASSERT_NE(at, std::string::npos) << "the conv1d example no longer splits its operands this way";
  cheat.replace(at, lo.size(), "kv_mtia_se_unary(d, KV_OP_COPY, rem, KV_CB_POP, lo, rows, cols, KV_F32, KV_BF16, 0.0f, 0.0f);");
  auto v = (*ev)->evaluate(cheat);
  ASSERT_TRUE(v.has_value()) << v.error().message;
  EXPECT_EQ(eval::to_string(v->result), std::string("wrong_result")) << v->reason;
}
INSTANTIATE_TEST_SUITE_P(All, MtiaExamples,
                         ::testing::Values("bias_gelu", "softmax", "layernorm", "rmsnorm", "gemm_bias_relu", "bucketize",
                                           "feature_hash", "embedding_bag_sum", "jagged_to_padded_dense",
                                           "sequence_truncate", "dot_interaction", "conv1d"));

// sequence_truncate reads min(len_b, K) rows per sequence: the evaluator holds
// a kernel to the rows its input sets keep (b256_k32_d64: mean length 64, so
// most are cut), not to min(TOTAL, B*K) rows, which it can beat.
TEST(MtiaBackend, TruncatingOperatorsAreHeldToTheRowsTheirInputsKeep) {
  const spec::operator_spec op = test_operator("ts_sequence_truncate");
  auto ev = eval::evaluator::create(op, "", fast_options(), mtia_profile());
  ASSERT_TRUE(ev.has_value()) << ev.error().message;
  auto v = (*ev)->evaluate(example("sequence_truncate"));
  ASSERT_TRUE(v.has_value()) << v.error().message;
  ASSERT_EQ(eval::to_string(v->result), std::string("ok")) << v->reason;
  const auto& s = v->shapes.front();
  ASSERT_FALSE(s.holdout);
  auto p = spec::resolve(op, op.variants.front(), op.shapes.front(), false);
  ASSERT_TRUE(p.has_value()) << p.error().message;
  EXPECT_LT(s.bytes, 0.9 * p->bytes) << "the roofline assumed every set keeps min(TOTAL, B*K) rows";
  EXPECT_GT(s.bytes, p->bytes_floor);
  EXPECT_GT(s.roofline_fraction, 0.0);
  EXPECT_LE(s.roofline_fraction, 1.0);
}

// kv_mtia_lm_gather reads only its table: an index past it fails the run.
TEST(MtiaBackend, GatherPastItsTableFailsTheRun) {
  auto ev = eval::evaluator::create(test_operator("ts_bucketize"), "", fast_options(), mtia_profile());
  ASSERT_TRUE(ev.has_value()) << ev.error().message;
  auto v = (*ev)->evaluate(kernel_source("cheats/mtia_emu/gather_past_table.cpp"));
  ASSERT_TRUE(v.has_value()) << v.error().message;
  EXPECT_EQ(eval::to_string(v->result), std::string("runtime_failed")) << v->reason;
  EXPECT_NE(v->reason.find("outside the table"), std::string::npos) << v->reason;
}

}  // namespace
}  // namespace kevolve::testing
