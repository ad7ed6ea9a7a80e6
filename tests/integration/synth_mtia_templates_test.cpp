// The builtin synthesizer on mtia_emu: for every starter operator with an
// mtia_emu template (small shapes, tests/data/operators/ts_*.yaml, first
// variant), the default kernel of every serving template and a few children
// compile and pass the real evaluator inside the emulator.
#include <gtest/gtest.h>

#include "eval/backends/mtia_emu_backend.h"
#include "support/test_env.h"
#include "synth/builtin_synthesizer.h"

namespace kevolve::testing {
namespace {

class SynthMtiaTemplates : public ::testing::TestWithParam<std::string> {};

// The default kernel of every template serving `op_name` and two sampled
// children pass the evaluator on the profile in use ($KEVOLVE_MTIA_PROFILE).
void defaults_and_children_pass(const std::string& op_name, const std::string& profile) {
  auto s = synth::builtin_synthesizer::create();
  ASSERT_TRUE(s.has_value()) << s.error().message;
  const spec::operator_spec op = test_operator(op_name);
  const spec::variant& var = op.variants.front();
  const auto ts = (*s)->serving(op, &var, "mtia_emu");
  ASSERT_FALSE(ts.empty()) << op.name;
  auto hw = eval::mtia_hardware_profile();
  ASSERT_TRUE(hw.has_value()) << hw.error().message;
  ASSERT_EQ(hw->name, profile);
  auto ev = eval::evaluator::create(op, var.name, fast_options(), *hw);
  ASSERT_TRUE(ev.has_value()) << ev.error().message;
  for (const auto* t : ts) {
    std::vector<synth::synthesis_result> kernels = {(*s)->render_with(*t, op, t->space.defaults(), "defaults")};
    kevolve::rng r(7);
    for (int i = 0; i < 2; ++i) kernels.push_back((*s)->render_with(*t, op, t->space.sample(r), "sampled"));
    for (const auto& k : kernels) {
      ASSERT_TRUE(k.ok) << k.error;
      auto v = (*ev)->evaluate(k.code);
      ASSERT_TRUE(v.has_value()) << v.error().message;
      EXPECT_EQ(eval::to_string(v->result), std::string("ok"))
          << profile << " " << t->name << " [" << k.summary << "]: " << v->reason << "\n"
          << v->compile.diagnostics.substr(0, 2000);
    }
  }
}

TEST_P(SynthMtiaTemplates, DefaultsAndChildrenPassTheEvaluator) { defaults_and_children_pass(GetParam(), "mtia2i"); }

// The second generation (issue 24): the templates size themselves from the
// device (local memory, accumulator bytes, PE grid: kv_mtia_query and the
// grid queries), so the same renders pass on mtia300 (512 KB local memory,
// 12 x 6 PEs, 128-lane SE, byte-aligned DMA).
TEST_P(SynthMtiaTemplates, DefaultsAndChildrenPassOnMtia300) {
  struct profile_env {
    profile_env() { ::setenv("KEVOLVE_MTIA_PROFILE", "mtia300", 1); }
    ~profile_env() { ::unsetenv("KEVOLVE_MTIA_PROFILE"); }
  } env;
  defaults_and_children_pass(GetParam(), "mtia300");
}

// The bucketize grid index (a data-dependent kernel) with every engine choice
// and the SE / vector-core modulo schedule (pipe) on spread and on clustered
// boundaries (many equal ones, so full cells need more search steps than the
// schedule takes: it falls back to the SE search), holdouts included.
TEST(SynthMtiaTemplates, BucketizeGridIndexPassesOnSpreadAndClusteredBoundaries) {
  auto s = synth::builtin_synthesizer::create();
  ASSERT_TRUE(s.has_value()) << s.error().message;
  auto hw = eval::mtia_hardware_profile();
  ASSERT_TRUE(hw.has_value()) << hw.error().message;
  for (const char* name : {"ts_bucketize", "ts_bucketize_clustered"}) {
    const spec::operator_spec op = test_operator(name);
    const auto ts = (*s)->serving(op, &op.variants.front(), "mtia_emu");
    ASSERT_EQ(ts.size(), 1u) << name;
    auto ev = eval::evaluator::create(op, op.variants.front().name, fast_options(), *hw);
    ASSERT_TRUE(ev.has_value()) << ev.error().message;
    for (const char* engine : {"se", "split", "pipe"}) {
      synth::param_set p = ts[0]->space.defaults();
      p["index"] = 1;
      p["engine"] = std::string(engine) == "pipe" ? "se" : engine;
      p["pipe"] = std::string(engine) == "pipe" ? 1 : 0;
      p["slots"] = 2;
      const auto k = (*s)->render_with(*ts[0], op, p, "grid index");
      ASSERT_TRUE(k.ok) << k.error;
      auto v = (*ev)->evaluate(k.code);
      ASSERT_TRUE(v.has_value()) << v.error().message;
      EXPECT_EQ(eval::to_string(v->result), std::string("ok"))
          << name << " [" << k.summary << "]: " << v->reason << "\n" << v->compile.diagnostics.substr(0, 2000);
    }
  }
}

// Every variant of `name` passes the evaluator (holdouts included) with each
// of `choices` set over the template's defaults.
// The child the builtin synthesizer writes from one correct parent with these
// engine metrics (memory inherited, a fixed seed): what its rules make of them.
synth::synthesis_result child_by_rules(synth::synthesizer& s, const spec::operator_spec& op, const spec::variant& var,
                                       const std::string& code, std::map<std::string, double> metrics,
                                       const char* bottleneck, double roofline_fraction) {
  synth::context_item parent;
  parent.code = code;
  parent.result = eval::status::ok;
  parent.bottleneck = bottleneck;
  parent.roofline_fraction = roofline_fraction;
  parent.metrics = std::move(metrics);
  synth::synthesis_request req;
  req.op = &op;
  req.variant = &var;
  req.backend = "mtia_emu";
  req.seed = 11;
  req.mode = search::memory_mode::inherit;
  req.context = {parent};
  return s.write(req);
}

void expect_choices_pass(const char* name, const std::vector<synth::param_set>& choices) {
  auto s = synth::builtin_synthesizer::create();
  ASSERT_TRUE(s.has_value()) << s.error().message;
  auto hw = eval::mtia_hardware_profile();
  ASSERT_TRUE(hw.has_value()) << hw.error().message;
  const spec::operator_spec op = test_operator(name);
  for (const auto& var : op.variants) {
    const auto ts = (*s)->serving(op, &var, "mtia_emu");
    ASSERT_EQ(ts.size(), 1u) << name << " " << var.name;
    auto ev = eval::evaluator::create(op, var.name, fast_options(), *hw);
    ASSERT_TRUE(ev.has_value()) << ev.error().message;
    for (const auto& choice : choices) {
      synth::param_set p = ts[0]->space.defaults();
      p.update(choice);
      const auto k = (*s)->render_with(*ts[0], op, p, "choice");
      ASSERT_TRUE(k.ok) << k.error;
      auto v = (*ev)->evaluate(k.code);
      ASSERT_TRUE(v.has_value()) << v.error().message;
      EXPECT_EQ(eval::to_string(v->result), std::string("ok"))
          << var.name << " [" << k.summary << "]: " << v->reason << "\n" << v->compile.diagnostics.substr(0, 2000);
    }
  }
}

// dot_interaction's fp32 operand choices (l written as bf16 by the SE, the
// Gram's symmetry with four products, its sums on the RE, parts fanned out as
// bf16 by the MLU or the vector core, two samples per DPE pass) in both
// variants, on the aligned shapes and on the unaligned holdouts, where l_bf16
// and fan fall back to MLU copies; pairs_f16_d8 (aligned, F = 16, three or
// four samples per program) has stacked passes and one-sample ones,
// tail_f27_d8's last program ends off its 8-sample output unit, and the
// groups_* shapes give programs two or more output groups (the last two
// alternate their passes).
TEST(SynthMtiaTemplates, DotInteractionOperandChoicesPassBothVariants) {
  expect_choices_pass("ts_dot_interaction", {{{"l_bf16", 1}, {"slots", 2}},
                                             {{"sym", 1}, {"slots", 2}},
                                             {{"l_bf16", 1}, {"sym", 1}, {"slots", 3}},
                                             {{"sym", 1}, {"re_sym", 1}, {"fan", 2}, {"stack", 2}, {"slots", 3}},
                                             {{"sym", 1}, {"re_sym", 1}, {"fan", 2}, {"slots", 1}},
                                             {{"fan", 1}, {"stack", 2}, {"slots", 2}, {"out_units", 2}},
                                             {{"fan", 1}, {"stack", 2}, {"slots", 3}, {"out_units", 1}},
                                             {{"stack", 2}, {"out_units", 1}}});
}

// embedding_bag_sum with bags cut between programs (split: the next
// program's part of a bag comes over the reduction network), on bag lengths
// that stress it: a bag holding almost every row (it spans many programs,
// which pass its sum along), fewer rows or bags than programs, one bag, and
// more bags per program than one slot of offsets holds (the path without the
// one-stream schedule); with the pipelined and the serial schedule.
TEST(SynthMtiaTemplates, EmbeddingBagsCutBetweenProgramsPassOnSkewedBags) {
  expect_choices_pass("ts_embedding_bag_split", {{{"split", 1}, {"slots", 1}, {"bag_block", 4}, {"gather_rows", 16}},
                                                 {{"split", 1}, {"slots", 3}, {"balance", 1}, {"idx_ahead", 1},
                                                  {"prefetch", 1}, {"bag_block", 32}, {"gather_rows", 64}},
                                                 {{"split", 1}, {"slots", 4}, {"idx_ahead", 1}, {"bag_block", 128},
                                                  {"gather_rows", 256}},
                                                 // indices two runs ahead with one slot (the index CB needs two
                                                 // slots more, else the gathers deadlock); two speculative runs
                                                 {{"split", 1}, {"slots", 1}, {"idx_ahead", 1}, {"gather_rows", 16}},
                                                 {{"split", 1}, {"slots", 2}, {"idx_ahead", 1}, {"bag_block", 8},
                                                  {"gather_rows", 32}}});
}

// The row templates in every variant: a 16-bit row is widened to fp32, so
// at odd_tail (N = 1003: 32-byte-aligned chunks of 16 rows) five fp32 stages
// did not fit in local memory and layernorm's bf16 variant had no kernel at
// all (gamma and beta now pass through x's buffer, w shares u's); with the
// vector core's share it still had none until the share became optional
// where its buffer does not fit.
TEST(SynthMtiaTemplates, RowTemplatesPassEveryVariantAtOddRows) {
  for (const char* name : {"ts_layernorm", "ts_softmax", "ts_rmsnorm"})
    expect_choices_pass(name, {{{"slots", 1}},
                               {{"slots", 3}},
                               {{"chunk_kb", 4}, {"slots", 2}},
                               {{"vec_tail", 1}, {"slots", 3}}});
}

// Row statistics on the reduction engine (softmax's max; layernorm's sums of
// x and of squares, in three pipeline stages), with and without the vector
// core's share, at one-row chunks, several chunks per program and the odd
// holdouts (where the RE layout does not fit local memory, the SE chain runs).
TEST(SynthMtiaTemplates, RowStatisticsOnTheReductionEnginePassEveryVariant) {
  for (const char* name : {"ts_layernorm", "ts_softmax"})
    expect_choices_pass(name, {{{"re_stats", 1}, {"slots", 1}},
                               {{"re_stats", 1}, {"slots", 3}, {"chunk_kb", 4}},
                               {{"re_stats", 1}, {"vec_tail", 1}, {"slots", 2}, {"chunk_kb", 8}}});
}

// The shipped rules read dot_interaction's engine metrics: a vector core
// copying operands beside a half-idle MLU hands the copies to the MLU (fan 1,
// bf16 dlrm_f27_d128 80% of the roofline against 77% with fan 2). The child
// passes the evaluator; without the metrics the rule does not fire.
TEST(SynthMtiaTemplates, EngineMetricsMoveOperandCopiesToAnIdleMlu) {
  auto s = synth::builtin_synthesizer::create();
  ASSERT_TRUE(s.has_value()) << s.error().message;
  auto hw = eval::mtia_hardware_profile();
  ASSERT_TRUE(hw.has_value()) << hw.error().message;
  const spec::operator_spec op = test_operator("ts_dot_interaction");
  const spec::variant& var = op.variants.back();
  ASSERT_EQ(var.name, "bf16");
  const auto ts = (*s)->serving(op, &var, "mtia_emu");
  ASSERT_EQ(ts.size(), 1u);
  auto params = ts[0]->space.defaults();
  params["fan"] = 2;
  params["slots"] = 3;
  params["stack"] = 2;
  const auto parent = (*s)->render_with(*ts[0], op, params, "fan 2");
  ASSERT_NE(parent.code.find("#define KVP_FAN 2"), std::string::npos);
  auto child_of = [&](std::map<std::string, double> metrics) {
    return child_by_rules(**s, op, var, parent.code, std::move(metrics), "memory-bound", 0.7);
  };
  const auto child = child_of({{"vec_pct", 68.0}, {"mlu_pct", 38.0}, {"se_pct", 0.0}});
  ASSERT_TRUE(child.ok) << child.error;
  EXPECT_NE(child.summary.find("rule operand_copies_to_the_mlu"), std::string::npos) << child.summary;
  EXPECT_NE(child.code.find("#define KVP_FAN 1"), std::string::npos) << child.summary;
  EXPECT_NE(child.code.find("#define KVP_SLOTS 3"), std::string::npos) << child.summary;
  const auto blind = child_of({});
  EXPECT_EQ(blind.summary.find("operand_copies_to_the_mlu"), std::string::npos) << blind.summary;
  auto ev = eval::evaluator::create(op, var.name, fast_options(), *hw);
  ASSERT_TRUE(ev.has_value()) << ev.error().message;
  auto v = (*ev)->evaluate(child.code);
  ASSERT_TRUE(v.has_value()) << v.error().message;
  EXPECT_EQ(eval::to_string(v->result), std::string("ok")) << child.summary << ": " << v->reason;
}

// The shipped rules steer a row kernel by the emulator's engine metrics: an
// SE busy most of the time moves the row statistics to the RE, then an SE
// still saturated beside an idle vector core gives it its share. Each child
// passes the evaluator.
TEST(SynthMtiaTemplates, EngineMetricsSteerRowKernelsOffTheSe) {
  auto s = synth::builtin_synthesizer::create();
  ASSERT_TRUE(s.has_value()) << s.error().message;
  auto hw = eval::mtia_hardware_profile();
  ASSERT_TRUE(hw.has_value()) << hw.error().message;
  const spec::operator_spec op = test_operator("ts_layernorm");
  const spec::variant& var = op.variants.back();  // bf16
  ASSERT_EQ(var.name, "bf16");
  auto ev = eval::evaluator::create(op, var.name, fast_options(), *hw);
  ASSERT_TRUE(ev.has_value()) << ev.error().message;
  const auto ts = (*s)->serving(op, &var, "mtia_emu");
  ASSERT_EQ(ts.size(), 1u);
  auto child_of = [&](const std::string& code, std::map<std::string, double> metrics) {
    return child_by_rules(**s, op, var, code, std::move(metrics), "compute-bound", 0.5);
  };
  const auto root = (*s)->render_with(*ts[0], op, ts[0]->space.defaults(), "defaults");
  ASSERT_NE(root.code.find("#define KVP_RE_STATS 0"), std::string::npos);
  const auto first = child_of(root.code, {{"se_pct", 88.0}, {"vec_pct", 0.0}, {"re_pct", 0.0}});
  ASSERT_TRUE(first.ok) << first.error;
  EXPECT_NE(first.summary.find("rule row_statistics_off_the_se"), std::string::npos) << first.summary;
  EXPECT_NE(first.code.find("#define KVP_RE_STATS 1"), std::string::npos) << first.summary;
  EXPECT_NE(first.code.find("#define KVP_VEC_TAIL 0"), std::string::npos) << first.summary;
  const auto second = child_of(first.code, {{"se_pct", 94.0}, {"vec_pct", 0.0}, {"re_pct", 75.0}});
  ASSERT_TRUE(second.ok) << second.error;
  EXPECT_NE(second.summary.find("rule se_share_to_the_vector_core"), std::string::npos) << second.summary;
  EXPECT_NE(second.code.find("#define KVP_RE_STATS 1"), std::string::npos) << second.summary;
  EXPECT_NE(second.code.find("#define KVP_VEC_TAIL 1"), std::string::npos) << second.summary;
  // Without the metrics (a store written before them) neither rule fires.
  const auto blind = child_of(root.code, {});
  EXPECT_EQ(blind.summary.find("row_statistics_off_the_se"), std::string::npos) << blind.summary;
  for (const auto* k : {&first, &second}) {
    auto v = (*ev)->evaluate(k->code);
    ASSERT_TRUE(v.has_value()) << v.error().message;
    EXPECT_EQ(eval::to_string(v->result), std::string("ok")) << k->summary << ": " << v->reason;
  }
}

// conv1d's streamed tap matrices with their own slot count, resident or not.
TEST(SynthMtiaTemplates, Conv1dWeightSlotsPass) {
  expect_choices_pass("ts_conv1d", {{{"wslots", 2}, {"slots", 1}},
                                    {{"wslots", 3}, {"slots", 2}},
                                    {{"wslots", 2}, {"resident", 1}}});
}

// feature_hash on 32-bit halves (MLU split and join, 32-bit Barrett remainder
// with two corrections) is exact at the table sizes where its remainder
// changes form or its bound r < 4t < 2^32 is tightest (t = 2^30 - 1), on the
// SE and split between the engines; one correction fewer fails there.
TEST(SynthMtiaTemplates, FeatureHashHalvesIsExactAtTheTableEdges) {
  expect_choices_pass("ts_feature_hash_tables",
                      {{{"halves", 1}, {"engine", "se"}, {"slots", 3}, {"chunk_kb", 4}},
                       {{"halves", 1}, {"engine", "split"}, {"slots", 3}, {"chunk_kb", 4}}});
}

INSTANTIATE_TEST_SUITE_P(Starters, SynthMtiaTemplates,
                         ::testing::Values("ts_bias_gelu", "ts_softmax", "ts_layernorm", "ts_rmsnorm",
                                           "ts_gemm_bias_relu_bf16", "ts_bucketize", "ts_feature_hash",
                                           "ts_embedding_bag_sum", "ts_jagged_to_padded_dense", "ts_sequence_truncate",
                                           "ts_dot_interaction", "ts_conv1d"));

}  // namespace
}  // namespace kevolve::testing
