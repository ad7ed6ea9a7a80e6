// `torch` as a map (src/eval/torch_entry.py's module and function forms):
// the loader keeps it as JSON with the file absolute, and an operator in
// PyTorch needs neither a C++ reference nor a cpu baseline.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "common/fs.h"
#include "spec/operator_loader.h"

namespace kevolve::spec {
namespace {
namespace fs = std::filesystem;

const char* kHead =
    "class: custom\n"
    "description: a linear layer in PyTorch\n"
    "variants:\n  fp32: {T: fp32}\n"
    "symbols: [B, C]\n"
    "inputs:\n  - {name: x, dtype: T, shape: [B, C]}\n  - {name: w, dtype: T, shape: [4, C]}\n"
    "outputs:\n  - {name: y, dtype: T, shape: [B, 4]}\n"
    "params:\n  - {name: C, type: int, value: C}\n"
    "generators:\n  x: [{dist: uniform, low: 0, high: 1}]\n  w: [{dist: uniform, low: 0.5, high: 0.5}]\n"
    "shapes:\n  - {name: s, B: 8, C: 16}\n"
    "holdout_shapes:\n  - {name: h, B: 3, C: 5}\n"
    "bytes: \"(B * C + 4 * C + 4 * B) * sizeof(T)\"\n"
    "flops: \"8 * B * C\"\n"
    "tolerance:\n  fp32: {atol: 1e-4, rtol: 1e-4}\n";

struct fixture {
  temp_dir dir;
  fs::path yaml;
};

fixture write(const std::string& name, const std::string& torch) {
  auto dir = temp_dir::create("kevolve-torch-entry-test-");
  EXPECT_TRUE(dir.has_value());
  const fs::path yaml = dir->path() / (name + ".yaml");
  std::ofstream(dir->path() / "m.py") << "import torch\n";
  std::ofstream(yaml) << "name: " << name << "\n" << kHead << "torch: " << torch << "\n";
  return {std::move(*dir), yaml};
}

TEST(torch_entry, a_module_map_is_kept_as_json_with_the_file_absolute_and_needs_no_reference_or_baseline) {
  auto f = write("lin", "{file: m.py, module: Model, init: [C, 4, [C, 1], 0.5], weights: {w: lin.weight}, eval: true}");
  auto op = load_operator(f.yaml);
  ASSERT_TRUE(op.has_value()) << op.error().message;
  EXPECT_TRUE(op->torch.empty());
  EXPECT_TRUE(op->reference.empty());
  EXPECT_TRUE(op->baseline.source.empty());
  const std::string file = (f.dir.path() / "m.py").lexically_normal().string();
  EXPECT_NE(op->torch_entry.find("\"file\":\"" + file + "\""), std::string::npos) << op->torch_entry;
  EXPECT_NE(op->torch_entry.find("\"init\":[\"C\",4,[\"C\",1],0.5]"), std::string::npos) << op->torch_entry;
  EXPECT_NE(op->torch_entry.find("\"weights\":{\"w\":\"lin.weight\"}"), std::string::npos) << op->torch_entry;
  EXPECT_NE(op->torch_entry.find("\"eval\":true"), std::string::npos) << op->torch_entry;
}

TEST(torch_entry, bad_maps_name_the_key_and_the_expectation) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"{file: m.py, module: Model, init: [D]}", "'torch.init' names \"D\", which is no param of the operator"},
      {"{file: m.py, module: Model, weights: {v: lin.weight}}", "'torch.weights.v' names no input of the operator"},
      {"{file: gone.py, module: Model}", "'torch.file' must name an existing file relative to the YAML"},
      {"{file: m.py}", "'torch' needs exactly one of 'function'"},
      {"{file: m.py, function: f, eval: true}", "'torch.eval' applies to 'module' only"},
      {"{file: m.py, module: Model, expr: x}", "'torch.expr' is not a known key"},
  };
  for (const auto& [torch, expect] : cases) {
    auto f = write("bad", torch);
    auto op = load_operator(f.yaml);
    ASSERT_FALSE(op.has_value()) << torch;
    EXPECT_NE(op.error().message.find(expect), std::string::npos) << torch << "\n" << op.error().message;
  }
}

TEST(torch_entry, without_torch_the_reference_is_still_required) {
  auto dir = temp_dir::create("kevolve-torch-entry-test-");
  ASSERT_TRUE(dir.has_value());
  const fs::path yaml = dir->path() / "lin.yaml";
  std::ofstream(yaml) << "name: lin\n" << kHead;
  auto op = load_operator(yaml);
  ASSERT_FALSE(op.has_value());
  EXPECT_NE(op.error().message.find("'reference' is required"), std::string::npos) << op.error().message;
}

}  // namespace
}  // namespace kevolve::spec
