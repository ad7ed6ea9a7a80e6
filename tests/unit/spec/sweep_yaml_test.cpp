// kevolve split's core: a sweep becomes one loadable sweep file per operator
// or backend, keeping everything else.
#include "spec/sweep_yaml.h"

#include <fstream>

#include <gtest/gtest.h>

#include "common/fs.h"

namespace kevolve::spec {
namespace {

const char* kSweep =
    "# my sweep\n"
    "sweep:\n"
    "  operators: [softmax, layernorm]\n"
    "  backends: [cpu]\n"
    "  seed: 3\n"
    "  priorities: {softmax: 2, layernorm: 1}\n"
    "search:\n"
    "  policy: greedy\n"
    "  stop: {max_evaluations: 5}\n";

TEST(SweepYaml, FlattensEveryScalarUnderItsPath) {
  auto f = flatten_sweep_yaml(kSweep, "s.yaml");
  ASSERT_TRUE(f.has_value()) << f.error().message;
  EXPECT_EQ(f->at("sweep.operators[1]"), "layernorm");
  EXPECT_EQ(f->at("search.stop.max_evaluations"), "5");
  EXPECT_EQ(f->at("sweep.priorities.softmax"), "2");
  auto bad = flatten_sweep_yaml("sweep: [a\n", "s.yaml");
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.error().message.find("s.yaml:"), std::string::npos);
}

TEST(SweepYaml, SplitByOperatorGivesLoadableSweepsOfOneOperatorEach) {
  auto dir = temp_dir::create("kevolve-split-test-");
  ASSERT_TRUE(dir.has_value());
  const auto file = dir->path() / "s.yaml";
  std::ofstream(file) << kSweep;
  auto s = load_sweep(file);
  ASSERT_TRUE(s.has_value()) << s.error().message;
  auto pieces = split_sweep(*s, "operator");
  ASSERT_TRUE(pieces.has_value()) << pieces.error().message;
  ASSERT_EQ(pieces->size(), 2u);
  EXPECT_EQ((*pieces)[1].name, "layernorm");
  const auto piece = dir->path() / "p1.yaml";
  std::ofstream(piece) << (*pieces)[1].yaml;
  auto loaded = load_sweep(piece);
  ASSERT_TRUE(loaded.has_value()) << loaded.error().message << "\n" << (*pieces)[1].yaml;
  EXPECT_EQ(loaded->operators, std::vector<std::string>{"layernorm"});
  EXPECT_EQ(loaded->priorities.count("softmax"), 0u);  // it would name an operator outside the piece
  EXPECT_EQ(loaded->search.stop.max_evaluations, 5);
  EXPECT_EQ(loaded->search.seed, 3u);
  EXPECT_EQ((*pieces)[1].yaml.rfind("# piece of ", 0), 0u);

  auto by_backend = split_sweep(*s, "backend");
  ASSERT_TRUE(by_backend.has_value());
  ASSERT_EQ(by_backend->size(), 1u);
  EXPECT_EQ((*by_backend)[0].name, "cpu");
  EXPECT_FALSE(split_sweep(*s, "shape").has_value());
}

}  // namespace
}  // namespace kevolve::spec
