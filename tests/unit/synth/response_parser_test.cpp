// Replies turned into kernels before an evaluation is spent: fenced code,
// diffs against the parent, and the reasons a reply is unusable.
#include <gtest/gtest.h>

#include "synth/response_parser.h"

namespace kevolve::synth {
namespace {

const std::string kParent =
    "#include <kevolve/abi.h>\n"
    "extern \"C\" int kevolve_kernel(const kv_args* a) {\n"
    "  int n = 4;\n"
    "  return 0;\n"
    "}\n";

TEST(ResponseParser, AFencedKernelIsTakenWithItsSummary) {
  const auto k = extract_kernel("Vectorised the row loop.\n\n```cpp\n" + kParent + "```\n", "", "cpu");
  ASSERT_TRUE(k.ok) << k.unusable;
  EXPECT_EQ(k.code, kParent);
  EXPECT_EQ(k.how, "fenced");
  EXPECT_EQ(k.summary, "Vectorised the row loop.");
}

TEST(ResponseParser, ADiffIsAppliedToTheParent) {
  const std::string reply =
      "Use 8 lanes.\n```diff\n--- a/kernel.cpp\n+++ b/kernel.cpp\n@@ -2,3 +2,3 @@\n"
      " extern \"C\" int kevolve_kernel(const kv_args* a) {\n-  int n = 4;\n+  int n = 8;\n   return 0;\n```\n";
  const auto k = extract_kernel(reply, kParent, "cpu");
  ASSERT_TRUE(k.ok) << k.unusable;
  EXPECT_EQ(k.how, "diff");
  EXPECT_NE(k.code.find("int n = 8;"), std::string::npos);
  EXPECT_EQ(k.code.find("int n = 4;"), std::string::npos);
}

TEST(ResponseParser, UnusableRepliesSayWhy) {
  EXPECT_EQ(extract_kernel("I would vectorise it.", kParent, "cpu").unusable, "the reply has no fenced code block or diff");
  EXPECT_EQ(extract_kernel("```cpp\n" + kParent, kParent, "cpu").unusable,
            "the reply's code block is not closed (cut off at max_tokens?)");
  EXPECT_EQ(extract_kernel("```cpp\nint kevolve_kernel(const kv_args* a) { return 0; }\n```", "", "cpu").unusable,
            "kevolve_kernel is not declared extern \"C\" (the evaluator looks up the unmangled symbol)");
  EXPECT_EQ(extract_kernel("```cpp\nint main() {}\n```", "", "cpu").unusable, "no code block in the reply defines kevolve_kernel");
  EXPECT_EQ(extract_kernel("```diff\n@@ -1 +1 @@\n-nothing like this\n+x\n```", kParent, "cpu").unusable,
            "the diff does not apply to the parent (hunk 1 does not match)");
  EXPECT_EQ(extract_kernel("```diff\n@@ -1 +1 @@\n-a\n+b\n```", "", "cpu").unusable,
            "the reply is a diff, but the child has no parent to apply it to");
}

TEST(ResponseParser, GpuBackendsNeedTheStreamArgument) {
  EXPECT_NE(check_abi_symbol(kParent, "cuda"), "");
  EXPECT_EQ(check_abi_symbol("extern \"C\" int kevolve_kernel(const kv_args* a, cudaStream_t s) { return 0; }", "cuda"), "");
  EXPECT_EQ(check_abi_symbol("extern \"C\" {\nint kevolve_kernel(const kv_args* a) { return 0; }\n}", "cpu"), "");
}

}  // namespace
}  // namespace kevolve::synth
