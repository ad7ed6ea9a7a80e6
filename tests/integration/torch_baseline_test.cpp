// PyTorch as the yardstick through the real evaluator on the CPU (the
// project's PyTorch, .venv): the operator's `torch` runs in its own process
// on the shape's inputs (eager, and torch.compile's CPU code generation), its
// outputs are checked against the reference, and the fitness is the speedup
// over the faster of the two unless told 'fitness: baseline'. The GPU half
// (CUDA events) runs in bench/cuda_check.sh on the device.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>

#include "common/paths.h"
#include "eval/torch_baseline.h"
#include "support/test_env.h"

namespace kevolve::testing {
namespace {

// The evaluator of `op` with the PyTorch baselines on; skips without PyTorch.
std::unique_ptr<eval::evaluator> torch_evaluator(const spec::operator_spec& op, std::optional<bool> on = true,
                                                 const std::string& variant = "", const std::string& fitness = "",
                                                 std::optional<bool> compile = false) {
  eval::evaluator_options o = fast_options();
  o.torch_baselines = on;
  o.fitness = fitness;
  o.torch_compile = compile;  // torch.compile costs ~15 s per process on 2 cores: where the test is about it only
  auto e = eval::evaluator::create(op, variant, o, machine_profile());
  EXPECT_TRUE(e.has_value()) << (e ? "" : e.error().message);
  return e ? std::move(*e) : nullptr;
}

// A correct candidate: the CPU example of the operator (knowledge/examples/cpu/) or, without one, its baseline.
eval::verdict evaluate_baseline_source(eval::evaluator& e, const spec::operator_spec& op) {
  const auto example = data_root() / "knowledge/examples/cpu" / (op.name.substr(op.name.find('_') + 1) + ".cpp");
  auto source = read_file(op.name.rfind("ts_", 0) == 0 ? example : op.baseline.source);
  EXPECT_TRUE(source.has_value());
  auto v = e.evaluate(source ? *source : "");
  EXPECT_TRUE(v.has_value()) << (v ? "" : v.error().message);
  return v ? *v : eval::verdict{};
}

class TorchBaseline : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string why = eval::probe_torch(python_executable(), "cpu");
    if (!why.empty()) GTEST_SKIP() << "no PyTorch for the CPU (scripts/install-python.sh installs it in .venv): " << why;
  }
};

void check_variant(const spec::operator_spec& op, const std::string& variant);

// Every starter operator's expression, at the small shapes of its ts_ copy
// and in every dtype variant: eager is timed at every timed shape and agrees
// with the reference; with 'fitness: baseline' the candidate's fitness is
// its speedup over the timed baseline.
class CatalogExpression : public TorchBaseline, public ::testing::WithParamInterface<std::string> {};

TEST_P(CatalogExpression, EagerAgreesWithTheReferenceAndIsTimed) {
  auto catalog = spec::find_operator(GetParam());
  ASSERT_TRUE(catalog.has_value()) << catalog.error().message;
  ASSERT_FALSE(catalog->torch.empty()) << GetParam() << " has no 'torch' expression";
  spec::operator_spec op = test_operator("ts_" + GetParam());
  op.set_torch_expression(catalog->torch);
  for (const auto& variant : op.variants) {
    SCOPED_TRACE(variant.name);
    check_variant(op, variant.name);
  }
}

void check_variant(const spec::operator_spec& op, const std::string& variant) {
  auto e = torch_evaluator(op, true, variant, "baseline");
  ASSERT_NE(e, nullptr);
  const eval::verdict v = evaluate_baseline_source(*e, op);
  EXPECT_EQ(v.fitness_basis, "baseline");
  ASSERT_EQ(v.result, eval::status::ok) << v.reason;
  double log_speedup = 0;
  int timed = 0;
  for (const auto& s : v.shapes) {
    if (s.holdout) {
      EXPECT_FALSE(s.torch_eager.measured()) << s.shape << ": holdout shapes are never timed";
      continue;
    }
    EXPECT_TRUE(s.torch_eager.measured()) << s.shape << ": " << s.torch_eager.note;
    EXPECT_EQ(s.torch_eager.note, "") << s.shape;
    EXPECT_GE(s.torch_eager.time.runs, fast_options().min_runs) << s.shape;
    EXPECT_NEAR(s.torch_eager.speedup, s.torch_eager.time.median_s / s.candidate.median_s, 1e-9) << s.shape;
    EXPECT_FALSE(s.torch_compile.measured()) << s.shape << ": torch.compile was off";
    log_speedup += std::log(s.speedup);
    ++timed;
  }
  ASSERT_GT(timed, 0);
  EXPECT_NEAR(v.fitness, std::exp(log_speedup / timed), 1e-9) << "the fitness is the speedup over the timed baseline";
}

INSTANTIATE_TEST_SUITE_P(Starters, CatalogExpression,
                         ::testing::Values("softmax", "layernorm", "rmsnorm", "bias_gelu", "embedding_bag_sum",
                                           "bucketize", "feature_hash", "jagged_to_padded_dense", "sequence_truncate",
                                           "dot_interaction", "conv1d", "gemm_bias_relu"));

// Measured once per evaluator and shape: a second candidate sees the same times.
TEST_F(TorchBaseline, MeasuredOncePerEvaluatorAndShape) {
  spec::operator_spec op = test_operator("t_softmax");
  op.set_torch_expression("torch.softmax(x.float(), dim=-1).to(x.dtype)");
  auto e = torch_evaluator(op);
  ASSERT_NE(e, nullptr);
  const eval::verdict a = evaluate_baseline_source(*e, op), b = evaluate_baseline_source(*e, op);
  ASSERT_FALSE(a.shapes.empty());
  ASSERT_TRUE(a.shapes[0].torch_eager.measured()) << a.shapes[0].torch_eager.note;
  EXPECT_EQ(a.shapes[0].torch_eager.time.median_s, b.shapes[0].torch_eager.time.median_s);
  EXPECT_EQ(a.shapes[0].torch_eager.time.runs, b.shapes[0].torch_eager.time.runs);
}

// A wrong expression is caught by the reference check and never timed; with
// 'fitness: baseline' the candidate's verdict is unaffected, and where the
// fitness is over PyTorch the evaluation is an error naming the operator.
TEST_F(TorchBaseline, WrongExpressionIsReportedNotTimed) {
  struct bad {
    const char* expr;
    const char* note;
  };
  for (const bad& c : {bad{"torch.softmax(x, dim=0)", "wrong: the torch expression disagrees with the reference: "},
                       bad{"torch.softmax(x.double(), dim=-1)",
                           "wrong: the torch expression failed: ValueError: output 'y' is torch.float64, the operator's is fp32"},
                       bad{"torch.no_such_function(x)", "wrong: the torch expression failed: AttributeError"}}) {
    spec::operator_spec op = test_operator("t_softmax");
    op.set_torch_expression(c.expr);
    auto e = torch_evaluator(op, true, "", "baseline");
    ASSERT_NE(e, nullptr);
    const eval::verdict v = evaluate_baseline_source(*e, op);
    EXPECT_EQ(v.result, eval::status::ok) << c.expr << ": " << v.reason;
    const auto& s = v.shapes.at(0);
    EXPECT_FALSE(s.torch_eager.measured()) << c.expr;
    EXPECT_EQ(s.torch_eager.note.rfind(c.note, 0), 0u) << c.expr << ": note was: " << s.torch_eager.note;
  }
  spec::operator_spec op = test_operator("t_softmax");
  op.set_torch_expression("torch.softmax(x, dim=0)");
  auto e = torch_evaluator(op, true, "", "torch");
  ASSERT_NE(e, nullptr);
  auto source = read_file(op.baseline.source);
  ASSERT_TRUE(source.has_value());
  auto v = e->evaluate(*source);
  ASSERT_FALSE(v.has_value()) << "a broken yardstick gave a verdict";
  EXPECT_NE(v.error().message.find("t_softmax.yaml"), std::string::npos) << v.error().message;
  EXPECT_NE(v.error().message.find("PyTorch could not be timed"), std::string::npos) << v.error().message;
}

// The runner's environment is scrubbed like the workers': an API key of the
// evaluator's process never reaches it (were it visible, the expression
// would return zeros and fail the reference check).
TEST_F(TorchBaseline, RunnerSeesNoSecrets) {
  ::setenv("OPENAI_API_KEY", "sk-test-must-not-leak", 1);
  spec::operator_spec op = test_operator("t_softmax");
  op.set_torch_expression("torch.softmax(x, dim=-1) * (0 if 'OPENAI_API_KEY' in __import__('os').environ else 1)");
  auto e = torch_evaluator(op);
  eval::verdict v;
  if (e) v = evaluate_baseline_source(*e, op);
  ::unsetenv("OPENAI_API_KEY");
  ASSERT_NE(e, nullptr);
  EXPECT_TRUE(v.shapes.at(0).torch_eager.measured()) << v.shapes.at(0).torch_eager.note;
  for (const auto& kv : eval::torch_environment(python_executable(), "/tmp", 1))
    EXPECT_EQ(kv.find("OPENAI_API_KEY"), std::string::npos) << kv;
}

// On by default on the CPU, eager and torch.compile, and the fitness is the
// speedup over the faster of the two, named in the verdict; without a
// `torch`, the fitness is over the baseline and the verdict says why.
TEST_F(TorchBaseline, OnByDefaultOnTheCpuAndTheFitnessIsOverTheFasterSide) {
  spec::operator_spec op = test_operator("t_softmax");
  op.set_torch_expression("torch.softmax(x, dim=-1)");
  auto by_default = torch_evaluator(op, std::nullopt, "", "", std::nullopt);
  ASSERT_NE(by_default, nullptr);
  const eval::verdict d = evaluate_baseline_source(*by_default, op);
  ASSERT_EQ(d.result, eval::status::ok) << d.reason;
  EXPECT_EQ(d.fitness_basis, "torch");
  double log_speedup = 0;
  int timed = 0;
  for (const auto& s : d.shapes) {
    if (s.holdout) continue;
    ASSERT_TRUE(s.torch_eager.measured()) << s.torch_eager.note;
    ASSERT_TRUE(s.torch_compile.measured()) << s.torch_compile.note;
    const double faster = std::min(s.torch_eager.time.median_s, s.torch_compile.time.median_s);
    EXPECT_NEAR(s.fitness_speedup, faster / s.candidate.median_s, 1e-9 * s.fitness_speedup) << s.shape;
    log_speedup += std::log(s.fitness_speedup);
    ++timed;
  }
  ASSERT_GT(timed, 0);
  EXPECT_NEAR(d.fitness, std::exp(log_speedup / timed), 1e-9 * d.fitness);
  EXPECT_EQ(eval::describe_fitness(d).rfind("× PyTorch (geomean over", 0), 0u) << eval::describe_fitness(d);
  EXPECT_NE(eval::describe_fitness(d, d.shapes.at(0)).find("torch 2."), std::string::npos);

  op.set_torch_expression("");
  auto missing = torch_evaluator(op);
  ASSERT_NE(missing, nullptr);
  const eval::verdict m = evaluate_baseline_source(*missing, op);
  EXPECT_EQ(m.fitness_basis, "baseline");
  EXPECT_NE(m.fitness_note.find("has no 'torch'"), std::string::npos) << m.fitness_note;
  EXPECT_NE(m.shapes.at(0).torch_eager.note.find("has no 'torch'"), std::string::npos)
      << m.shapes.at(0).torch_eager.note;
  EXPECT_EQ(eval::to_json(m)["shapes"][0]["torch_eager"]["note"], m.shapes.at(0).torch_eager.note);
}

// The time of a (operator, variant, shape, device, torch version) is kept on
// disk: a second evaluator of the same task spends well under a second on
// PyTorch and reports the same times.
TEST_F(TorchBaseline, MeasuredOncePerShapeAndCachedOnDisk) {
  spec::operator_spec op = test_operator("t_softmax");
  op.set_torch_expression("torch.softmax(x, dim=-1) + 0.0");  // its own cache entry
  std::vector<eval::verdict> v;
  for (int i = 0; i < 2; ++i) {
    auto e = torch_evaluator(op);
    ASSERT_NE(e, nullptr);
    v.push_back(evaluate_baseline_source(*e, op));
    ASSERT_EQ(v.back().result, eval::status::ok) << v.back().reason;
  }
  ASSERT_TRUE(v[1].shapes.at(0).torch_eager.measured());
  EXPECT_EQ(v[0].shapes.at(0).torch_eager.time.median_s, v[1].shapes.at(0).torch_eager.time.median_s);
  const auto spent = v[1].overhead_phases.find(eval::kTorchPhase);
  ASSERT_NE(spent, v[1].overhead_phases.end());
  EXPECT_LT(spent->second, 1.0) << "the second evaluator measured PyTorch again";
}

}  // namespace
}  // namespace kevolve::testing
