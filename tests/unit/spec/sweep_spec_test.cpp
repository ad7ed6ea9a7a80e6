// Sweep YAML: the shipped quickstart loads; mistakes name file, line and key.
#include <fstream>

#include <gtest/gtest.h>

#include "common/fs.h"
#include "common/paths.h"
#include "spec/sweep_spec.h"

namespace kevolve::spec {
namespace {

class SweepSpec : public ::testing::Test {
 protected:
  void SetUp() override {
    auto d = temp_dir::create("kevolve-sweep-spec-");
    ASSERT_TRUE(d.has_value());
    dir_ = std::make_unique<temp_dir>(std::move(*d));
  }
  std::filesystem::path write(const std::string& yaml) {
    const auto f = dir_->path() / "sweep.yaml";
    std::ofstream(f) << yaml;
    return f;
  }
  static std::string valid() {
    return "sweep:\n"
           "  operators: [softmax, layernorm]\n"
           "  backends: [cpu]\n"
           "search:\n"
           "  policy: greedy\n"
           "  stop: {max_evaluations: 5}\n";
  }
  std::unique_ptr<temp_dir> dir_;
};

TEST_F(SweepSpec, TheQuickstartLoadsWithEveryOperator) {
  auto s = load_sweep(data_root() / "config" / "quickstart.yaml");
  ASSERT_TRUE(s.has_value()) << s.error().message;
  EXPECT_EQ(s->operators.size(), 13u);
  EXPECT_EQ(s->search.policy.name, "uct");
  EXPECT_GT(s->search.stop.max_evaluations, 0);
  EXPECT_EQ(s->backends, (std::vector<std::string>{"cpu", "mtia_emu"}));
}

TEST_F(SweepSpec, ValidFileGivesItsValues) {
  auto s = load_sweep(write(valid()));
  ASSERT_TRUE(s.has_value()) << s.error().message;
  EXPECT_EQ(s->operators, (std::vector<std::string>{"softmax", "layernorm"}));
  EXPECT_EQ(s->search.policy.name, "greedy");
  EXPECT_EQ(s->search.stop.max_evaluations, 5);
  EXPECT_FALSE(s->text.empty());
}

TEST_F(SweepSpec, UnknownKeyNamesFileLineAndKey) {
  auto s = load_sweep(write(valid() + "evaluator:\n  budgett: 0.1\n"));
  ASSERT_FALSE(s.has_value());
  EXPECT_NE(s.error().message.find("sweep.yaml:8: 'evaluator.budgett' is not a known key"), std::string::npos)
      << s.error().message;
}

// yaml-cpp reads the first of two equal keys: a repeated key is an error, as
// is a section written as text (here both at once, as a stray edit left them).
TEST_F(SweepSpec, RepeatedKeysAndSectionsThatAreNotMapsAreRefused) {
  auto s = load_sweep(write("sweep: every operator\n" + valid()));
  ASSERT_FALSE(s.has_value());
  EXPECT_NE(s.error().message.find("sweep.yaml:2: 'sweep' appears twice (first on line 1)"), std::string::npos)
      << s.error().message;
  EXPECT_NE(s.error().message.find("sweep.yaml:1: 'sweep.operators' is required, but its section is"), std::string::npos)
      << s.error().message;
  std::string y = valid();
  y.replace(y.find("  backends: [cpu]\n"), 0, "  backends: [mtia_emu]\n");
  s = load_sweep(write(y));
  ASSERT_FALSE(s.has_value());
  EXPECT_NE(s.error().message.find("sweep.yaml:4: 'sweep.backends' appears twice (first on line 3)"), std::string::npos)
      << s.error().message;
}

TEST_F(SweepSpec, UnknownPolicyIsRefused) {
  std::string y = valid();
  y.replace(y.find("greedy"), 6, "annealing");
  auto s = load_sweep(write(y));
  ASSERT_FALSE(s.has_value());
  EXPECT_NE(s.error().message.find("'search.policy' must be uct, greedy or tournament"), std::string::npos)
      << s.error().message;
}

TEST_F(SweepSpec, UnknownOperatorAndBackendAreRefused) {
  std::string y = valid();
  y.replace(y.find("layernorm"), 9, "no_such_op");
  y.replace(y.find("[cpu]"), 5, "[cpu, rocm]");
  auto s = load_sweep(write(y));
  ASSERT_FALSE(s.has_value());
  EXPECT_NE(s.error().message.find("unknown operator 'no_such_op'"), std::string::npos) << s.error().message;
  EXPECT_NE(s.error().message.find("'sweep.backends' lists 'rocm'"), std::string::npos) << s.error().message;
}

TEST_F(SweepSpec, AStopRuleIsRequired) {
  std::string y = valid();
  y.replace(y.find("{max_evaluations: 5}"), 20, "{}");
  EXPECT_FALSE(load_sweep(write(y)).has_value());
}

TEST_F(SweepSpec, TorchBaselinesAreAutoOnOrOff) {
  auto d = load_sweep(write(valid()));
  ASSERT_TRUE(d.has_value()) << d.error().message;
  EXPECT_EQ(d->torch_baselines, "auto");
  auto off = load_sweep(write(valid() + "evaluator: {torch_baselines: off}\n"));
  ASSERT_TRUE(off.has_value()) << off.error().message;
  EXPECT_EQ(off->torch_baselines, "off");
  auto bad = load_sweep(write(valid() + "evaluator:\n  torch_baselines: maybe\n"));
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.error().message.find("sweep.yaml:8: 'evaluator.torch_baselines' must be auto, on or off, got \"maybe\""),
            std::string::npos)
      << bad.error().message;
}

TEST_F(SweepSpec, CompatibilityIgnoresTheCheckpointPeriodOnly) {
  auto a = load_sweep(write(valid()));
  auto b = load_sweep(write(valid() + "checkpoint: {every_seconds: 5}\n"));
  auto c = load_sweep(write(valid() + "evaluator: {budget: 0.5}\n"));
  ASSERT_TRUE(a && b && c);
  EXPECT_EQ(compatibility_text(*a), compatibility_text(*b));
  EXPECT_NE(compatibility_text(*a), compatibility_text(*c));
}

TEST_F(SweepSpec, RuntimeRankMapAndPrioritiesLoad) {
  std::string y = valid();
  y.replace(y.find("  backends: [cpu]\n"), 17, "  backends: [cpu]\n  priorities: {softmax: 3}\n");
  y += "runtime:\n  ranks:\n    - {ranks: \"1-2\", backend: cpu}\n    - {ranks: \"5-\", backend: cpu}\n"
       "  deadline_seconds: 30\n  silence_seconds: 10\n  grace_seconds: 20\n";
  auto s = load_sweep(write(y));
  ASSERT_TRUE(s.has_value()) << s.error().message;
  EXPECT_EQ(s->priorities.at("softmax"), 3.0);
  EXPECT_EQ(s->runtime.deadline_seconds, 30);
  EXPECT_EQ(s->runtime.grace_seconds, 20);
  EXPECT_EQ(backend_for_rank(s->runtime, 1), "cpu");
  EXPECT_EQ(backend_for_rank(s->runtime, 2), "cpu");
  EXPECT_EQ(backend_for_rank(s->runtime, 3), "");
  EXPECT_EQ(backend_for_rank(s->runtime, 400), "cpu");
}

TEST_F(SweepSpec, BadRuntimeKeysNameTheKeyAndTheExpectation) {
  struct bad_case {
    std::string runtime, expected;
  };
  for (const bad_case& c : {
           bad_case{"  ranks:\n    - {ranks: \"4-2\", backend: cpu}\n", "'runtime.ranks[0].ranks' must be a rank"},
           bad_case{"  ranks:\n    - {ranks: \"0\", backend: cpu}\n", "'runtime.ranks[0].ranks'"},
           bad_case{"  ranks:\n    - {ranks: \"1\", backend: cuda}\n", "not in sweep.backends"},
           bad_case{"  ranks:\n    - {ranks: \"1\"}\n", "runtime.ranks[0].backend"},
           bad_case{"  deadline_seconds: 0\n", "'runtime.deadline_seconds' must be at least"},
           bad_case{"  heartbeat_seconds: 5\n  silence_seconds: 8\n", "more than twice runtime.heartbeat_seconds"},
           bad_case{"  deadlines: 3\n", "runtime.deadlines"},
       }) {
    auto s = load_sweep(write(valid() + "runtime:\n" + c.runtime));
    ASSERT_FALSE(s.has_value()) << c.runtime;
    EXPECT_NE(s.error().message.find(c.expected), std::string::npos) << s.error().message;
    EXPECT_NE(s.error().message.find("sweep.yaml:"), std::string::npos) << s.error().message;
  }
  std::string y = valid();
  y.replace(y.find("  backends: [cpu]\n"), 17, "  backends: [cpu]\n  priorities: {gemm_bias_relu: 2}\n");
  auto p = load_sweep(write(y));
  ASSERT_FALSE(p.has_value());
  EXPECT_NE(p.error().message.find("'sweep.priorities.gemm_bias_relu' names an operator that is not in sweep.operators"),
            std::string::npos) << p.error().message;
}

TEST_F(SweepSpec, SweepShapesReplaceTheOperatorsTimedShapes) {
  std::string y = valid();
  y.replace(y.find("  backends: [cpu]\n"), 17,
            "  backends: [cpu]\n  shapes:\n    softmax:\n      - {name: small_rows, B: 512, N: 256}\n"
            "      - {name: wide, B: 64, N: 4096}\n");
  auto s = load_sweep(write(y));
  ASSERT_TRUE(s.has_value()) << s.error().message;
  ASSERT_EQ(s->shapes.count("softmax"), 1u);
  const auto& pts = s->shapes.at("softmax");
  ASSERT_EQ(pts.size(), 2u);
  EXPECT_EQ(pts[0].name, "small_rows");
  EXPECT_EQ(pts[0].values.at("B"), 512);
  EXPECT_EQ(pts[1].values.at("N"), 4096);
  // The shapes are part of what --resume must match.
  auto plain = load_sweep(write(valid()));
  ASSERT_TRUE(plain.has_value());
  EXPECT_NE(compatibility_text(*s), compatibility_text(*plain));
}

TEST_F(SweepSpec, BadSweepShapesNameTheKeyAndTheExpectation) {
  struct bad_case {
    std::string shapes, expected;
  };
  for (const bad_case& c : {
           bad_case{"    gemm_bias_relu:\n      - {name: a, M: 1, K: 1, N: 1}\n",
                    "'sweep.shapes.gemm_bias_relu' names an operator that is not in sweep.operators"},
           bad_case{"    softmax:\n      - {name: a, B: 4, Q: 8}\n", "'sweep.shapes.softmax[0].Q' is not a free symbol"},
           bad_case{"    softmax:\n      - {name: a, B: 4}\n", "'sweep.shapes.softmax[0]' gives no value for symbol 'N'"},
           bad_case{"    softmax:\n      - {name: a, B: -4, N: 8}\n", "must be a non-negative integer"},
           bad_case{"    softmax:\n      - {name: a, B: four, N: 8}\n", "'sweep.shapes.softmax[0].B' must be an integer"},
           bad_case{"    softmax:\n      - {name: a, B: 4, N: 8}\n      - {name: a, B: 8, N: 8}\n", "is given twice"},
           bad_case{"    softmax: {name: a}\n", "'sweep.shapes.softmax' must be a list"},
       }) {
    std::string y = valid();
    y.replace(y.find("  backends: [cpu]\n"), 17, "  backends: [cpu]\n  shapes:\n" + c.shapes);
    auto s = load_sweep(write(y));
    ASSERT_FALSE(s.has_value()) << c.shapes;
    EXPECT_NE(s.error().message.find(c.expected), std::string::npos) << s.error().message;
    EXPECT_NE(s.error().message.find("sweep.yaml:"), std::string::npos) << s.error().message;
  }
}

}  // namespace
}  // namespace kevolve::spec
