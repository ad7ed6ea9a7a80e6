// Baselines per backend: one map, `baselines: {cpu: ..., cuda: ...}`, and
// the keys before it still read, with one deprecation note per file.
#include <gtest/gtest.h>

#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "common/fs.h"
#include "spec/operator_loader.h"
#include "spec_test_util.h"

namespace kevolve::spec {
namespace {
namespace fs = std::filesystem;

TEST(OperatorBaselines, EveryBackendsBaselineIsOneMapEntry) {
  auto op = load_operator(testing::catalog_dir() / "gemm_bias_relu.yaml");
  ASSERT_TRUE(op.has_value()) << op.error().message;
  ASSERT_EQ(op->baselines.size(), 4u);
  for (const char* b : {"cpu", "cuda", "hip", "mtia_emu"}) EXPECT_TRUE(op->baselines.count(b)) << b;
  EXPECT_EQ(op->baselines.at("cuda").libraries, std::vector<std::string>{"cublas"});
  EXPECT_EQ(op->baselines.at("cuda").source, testing::catalog_dir() / "gemm_bias_relu" / "baseline.cu");
  // The host's baseline is also the one that stands in for the reference.
  EXPECT_EQ(op->baseline.source, op->baselines.at("cpu").source);
  EXPECT_EQ(op->baseline.libraries, std::vector<std::string>{"openblas"});
}

// An operator file written before the map: the same spec, one note per file.
TEST(OperatorBaselines, TheKeysBeforeTheMapAreReadWithOneNotePerFile) {
  const fs::path softmax = testing::catalog_dir() / "softmax";
  auto header = read_file(testing::test_data() / "bad_operators" / "baseline_not_found.yaml");
  ASSERT_TRUE(header.has_value());
  std::string yaml = header->substr(0, header->find("\nbaseline:") + 1);
  yaml.replace(yaml.find("name: baseline_not_found"), 24, "name: legacy_keys");
  yaml.replace(yaml.find("../../../config/operators/softmax/"), 34, softmax.string() + "/");
  yaml += "baseline:\n  name: plain C++\n  source: " + (softmax / "baseline.cpp").string() +
          "\ncuda_baseline:\n  name: plain CUDA\n  source: " + (softmax / "baseline.cu").string() +
          "\nmtia_baseline:\n  name: plain mtia\n  source: " + (softmax / "mtia_baseline.cpp").string() + "\n";
  char tmpl[] = "/tmp/kevolve-legacy-XXXXXX";
  const fs::path dir = ::mkdtemp(tmpl);
  const fs::path file = dir / "legacy_keys.yaml";
  std::ofstream(file) << yaml;

  std::ostringstream notes;
  auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(notes);
  spdlog::default_logger()->sinks().push_back(sink);
  auto first = load_operator(file);
  auto second = load_operator(file);
  spdlog::default_logger()->sinks().pop_back();
  fs::remove_all(dir);

  ASSERT_TRUE(first.has_value()) << first.error().message;
  ASSERT_TRUE(second.has_value());
  EXPECT_EQ(first->baselines.size(), 3u);
  EXPECT_EQ(first->baselines.at("cuda").name, "plain CUDA");
  EXPECT_EQ(first->baselines.at("mtia_emu").source, softmax / "mtia_baseline.cpp");
  EXPECT_EQ(first->baseline.name, "plain C++");
  const std::string text = notes.str();
  const std::string note = "'baseline', 'cuda_baseline', 'mtia_baseline' are deprecated: write 'baselines: {cpu: {...}, "
                           "cuda: {...}, mtia_emu: {...}}'";
  const size_t at = text.find(note);
  EXPECT_NE(at, std::string::npos) << text;
  EXPECT_EQ(text.find(note, at + 1), std::string::npos) << "noted twice:\n" << text;
}

}  // namespace
}  // namespace kevolve::spec
