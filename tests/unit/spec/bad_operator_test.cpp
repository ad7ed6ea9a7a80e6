// Malformed operator files from tests/data/bad_operators: each holds one
// defect and says in its header what the loader must report
//   # expect: 'key.path' expectation...
// and marks the line the message must point at with "# <-- error". The
// user's first error line must be "<file>:<that line>: <expectation...>".
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <string>
#include <vector>

#include "common/fs.h"
#include "spec/operator_loader.h"
#include "spec_test_util.h"

namespace kevolve::spec {
namespace {
namespace fs = std::filesystem;

const std::vector<std::string>& bad_operator_names() {
  static const std::vector<std::string> names = {
      "missing_flops",          "shape_value_not_integer",     "inputs_not_a_list",
      "unknown_dtype",          "unknown_variant_dtype",       "shape_missing_symbol",
      "shape_unknown_symbol",   "undeclared_symbol_in_dim",    "dim_zero",
      "dim_negative",           "shape_value_negative",        "unknown_top_level_key",
      "unknown_tensor_key",     "missing_tolerance",           "generator_for_unknown_input",
      "input_without_generator", "unknown_distribution",       "reference_not_found",
      "baseline_not_found",     "bad_expression",              "wrong_type_number",
      "unknown_class",          "name_mismatch",               "invalid_yaml",
      "torch_not_a_string",     "torch_empty",                 "data_symbol_of_a_float_input",
      "baseline_library_not_linkable", "baselines_unknown_backend", "baseline_given_twice",
      "allowed_library_unknown", "baselines_without_cpu",  "graph_main_not_an_op",
      "int_passes_negative",    "sequence_part_reads_unknown", "sequence_intermediate_unread",
      "sequence_with_workspace",
  };
  return names;
}

fs::path bad_dir() { return testing::test_data() / "bad_operators"; }

struct expectation {
  std::string text;  // after "# expect: "
  int line = 0;      // of the "# <-- error" marker, 1-based
};

expectation read_expectation(const fs::path& file) {
  expectation e;
  std::ifstream in(file);
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    const std::string tag = "# expect: ";
    if (line.rfind(tag, 0) == 0) e.text = line.substr(tag.size());
    if (line.find("# <-- error") != std::string::npos) {
      EXPECT_EQ(e.line, 0) << file << ": more than one error marker";
      e.line = n;
    }
  }
  return e;
}

class bad_operator : public ::testing::TestWithParam<std::string> {};

TEST_P(bad_operator, is_rejected_with_file_line_and_key) {
  const fs::path file = bad_dir() / (GetParam() + ".yaml");
  ASSERT_TRUE(fs::is_regular_file(file)) << file;
  const expectation want = read_expectation(file);
  ASSERT_FALSE(want.text.empty()) << file << ": no '# expect: ' header";
  ASSERT_GT(want.line, 0) << file << ": no '# <-- error' marker";

  auto op = load_operator(file);
  ASSERT_FALSE(op.has_value()) << file << " was accepted";
  EXPECT_EQ(op.error().code, errc::invalid_input);
  const std::string& msg = op.error().message;
  const std::string first = msg.substr(0, msg.find('\n'));
  const std::string prefix = file.string() + ":" + std::to_string(want.line) + ": " + want.text;
  EXPECT_EQ(first.substr(0, prefix.size()), prefix) << "whole message:\n" << msg;
}

INSTANTIATE_TEST_SUITE_P(files, bad_operator, ::testing::ValuesIn(bad_operator_names()),
                         [](const ::testing::TestParamInfo<std::string>& i) { return i.param; });

TEST(bad_operators, every_file_in_the_directory_is_covered) {
  std::set<std::string> listed(bad_operator_names().begin(), bad_operator_names().end());
  listed.insert("reference_does_not_compile");  // valid YAML; see below
  std::set<std::string> present;
  for (const auto& e : fs::directory_iterator(bad_dir()))
    if (e.path().extension() == ".yaml") present.insert(e.path().stem().string());
  EXPECT_EQ(present, listed);
}

// Same text as the other files with only the reference swapped for a source
// that does not compile: the schema is fine, so the loader accepts it (the
// compile step of `kevolve ops validate` must catch it, tests/cli). This is
// also the control for the cases above: their base text is valid.
TEST(bad_operators, reference_that_does_not_compile_passes_the_schema) {
  auto op = load_operator(bad_dir() / "reference_does_not_compile.yaml");
  ASSERT_TRUE(op.has_value()) << op.error().message;
  EXPECT_EQ(op->reference, bad_dir() / "reference_does_not_compile/reference.cpp");
  EXPECT_TRUE(fs::is_regular_file(op->reference));
}

TEST(bad_operators, several_defects_are_all_reported_one_per_line) {
  // A user fixing a file should see every problem at once, not one per run.
  auto dir = temp_dir::create("kevolve-bad-op-");
  ASSERT_TRUE(dir.has_value()) << dir.error().message;
  std::ifstream in(bad_dir() / "reference_does_not_compile.yaml");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto replace = [&](const std::string& from, const std::string& to) {
    const size_t at = text.find(from);
    ASSERT_NE(at, std::string::npos) << from;
    text.replace(at, from.size(), to);
  };
  replace("name: reference_does_not_compile", "name: several");
  replace("class: row_reduction", "class: nonsense");
  replace("flops: \"5 * B * N\"", "flops: [5]");
  replace("B: 256", "B: many");
  // The copy lives elsewhere: make its source paths absolute.
  replace("reference: reference_does_not_compile/reference.cpp",
          "reference: " + (bad_dir() / "reference_does_not_compile/reference.cpp").string());
  replace("source: ../../../config/operators/softmax/baseline.cpp",
          "source: " + (bad_dir() / "../../../config/operators/softmax/baseline.cpp").string());
  int class_line = 1;
  for (size_t i = 0; i < text.find("class: nonsense"); ++i) class_line += text[i] == '\n';
  const fs::path file = dir->path() / "several.yaml";
  std::ofstream(file) << text;
  auto op = load_operator(file);
  ASSERT_FALSE(op.has_value());
  const std::string& msg = op.error().message;
  EXPECT_NE(msg.find(file.string() + ":" + std::to_string(class_line) + ": 'class' must be one of"), std::string::npos) << msg;
  EXPECT_NE(msg.find("'flops' must be a number or an expression string, got a list"), std::string::npos) << msg;
  EXPECT_NE(msg.find("'shapes[0].B' must be an integer, got \"many\""), std::string::npos) << msg;
  size_t lines = 1;
  for (char c : msg) lines += c == '\n';
  EXPECT_EQ(lines, 3u) << msg;
}

}  // namespace
}  // namespace kevolve::spec
