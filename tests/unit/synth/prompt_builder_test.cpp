// The adaptive prompt: what each memory mode and diagnosis puts in it, and
// the token budget.
#include <gtest/gtest.h>

#include "spec/operator_loader.h"
#include "synth/prompt_builder.h"
#include "support/test_env.h"

namespace kevolve::synth {
namespace {

struct fixture {
  spec::operator_spec op = testing::test_operator("ts_softmax");
  std::shared_ptr<const knowledge::knowledge_base> kb;
  prompt_template tmpl;
  fixture() {
    auto k = knowledge::knowledge_base::load();
    EXPECT_TRUE(k.has_value());
    kb = std::make_shared<const knowledge::knowledge_base>(std::move(*k));
    auto t = prompt_template::load();
    EXPECT_TRUE(t.has_value()) << (t ? "" : t.error().message);
    tmpl = std::move(*t);
  }
  synthesis_request request(search::memory_mode mode) {
    synthesis_request r;
    r.op = &op;
    r.variant = &op.variants.front();
    r.backend = "cpu";
    r.mode = mode;
    return r;
  }
};

context_item item(search::node_id id, eval::status s, double fitness, const std::string& code) {
  context_item c;
  c.id = id;
  c.result = s;
  c.fitness = fitness;
  c.code = code;
  return c;
}

bool has(const std::vector<std::string>& v, const std::string& x) { return std::find(v.begin(), v.end(), x) != v.end(); }

TEST(PromptBuilder, AFirstDraftHasTheTaskTheAbiAndTheConstraintsButNoParent) {
  fixture f;
  prompt_builder b(f.tmpl, f.kb, 12000);
  const built_prompt p = b.build(f.request(search::memory_mode::reset));
  EXPECT_NE(p.system.find("cpu kernels for\nx86"), std::string::npos) << p.system;
  EXPECT_NE(p.user.find("`ts_softmax`"), std::string::npos);
  EXPECT_NE(p.user.find("extern \"C\" int kevolve_kernel(const kv_args* a)"), std::string::npos);
  EXPECT_NE(p.user.find("typedef struct kv_args"), std::string::npos);  // the ABI header itself
  EXPECT_NE(p.user.find("shapes:"), std::string::npos);                 // the operator's YAML
  EXPECT_NE(p.user.find("Start from a clean slate"), std::string::npos);
  EXPECT_EQ(p.user.find("## The parent kernel"), std::string::npos);
  EXPECT_TRUE(has(p.documents, "constraints/common.md"));
  EXPECT_TRUE(has(p.documents, "constraints/cpu.md"));
  EXPECT_FALSE(has(p.documents, "constraints/cuda.md"));
  EXPECT_EQ(p.triggers, std::vector<std::string>{"first_draft"});
  EXPECT_LE(p.tokens, 12000);
}

TEST(PromptBuilder, ACompileErrorBringsTheParentItsErrorsAndTheDebuggingGuide) {
  fixture f;
  prompt_builder b(f.tmpl, f.kb, 12000);
  auto r = f.request(search::memory_mode::inherit);
  r.parent = 3;
  r.context.push_back(item(1, eval::status::ok, 1.2, "// first draft\n"));
  auto parent = item(3, eval::status::compile_failed, 0, "// the parent's code\n");
  parent.reason = "compilation failed";
  parent.compile_diagnostics = "k.cpp:7:3: error: 'vfoo' was not declared in this scope";
  r.context.push_back(parent);  // inherit: the path, oldest first
  const built_prompt p = b.build(r);
  EXPECT_TRUE(has(p.triggers, "compile_error"));
  EXPECT_TRUE(has(p.documents, "guides/debugging.md"));
  EXPECT_NE(p.user.find("// the parent's code"), std::string::npos);
  EXPECT_NE(p.user.find("'vfoo' was not declared"), std::string::npos);
  EXPECT_NE(p.user.find("- node 1 (// first draft): ok, speedup 1.200x"), std::string::npos) << p.user;
}

TEST(PromptBuilder, AMemoryBoundParentBringsTheMemoryHierarchy) {
  fixture f;
  prompt_builder b(f.tmpl, f.kb, 12000);
  auto r = f.request(search::memory_mode::compare_siblings);
  r.parent = 2;
  auto parent = item(2, eval::status::ok, 1.1, "// parent\n");
  parent.bottleneck = "memory-bound";
  parent.roofline_fraction = 0.25;
  r.context = {parent, item(5, eval::status::ok, 1.4, "// best sibling\n"), item(6, eval::status::wrong_result, 0, "// worst sibling\n")};
  const built_prompt p = b.build(r);
  EXPECT_TRUE(has(p.triggers, "memory_bound"));
  EXPECT_TRUE(has(p.documents, "hardware/x86/memory-hierarchy.md"));
  EXPECT_FALSE(has(p.documents, "guides/debugging.md"));
  EXPECT_NE(p.user.find("// best sibling"), std::string::npos);
  EXPECT_NE(p.user.find("// worst sibling"), std::string::npos);
  EXPECT_NE(p.user.find("25.0% of the roofline"), std::string::npos);
  EXPECT_EQ(p.user.find("hardware counters"), std::string::npos);  // not profiled: no counters line

  // Profiled (Nsight Compute): the LLM sees the worst shape's counters too.
  r.context[0].metrics = {{"dram_pct", 41.3}, {"occupancy_pct", 22.0}};
  const built_prompt q = b.build(r);
  EXPECT_NE(q.user.find("hardware counters (profiled shape): dram_pct 41.3, occupancy_pct 22.0"), std::string::npos)
      << q.user;
}

// The mtia_emu prompt speaks about the emulator profile in use: mtia2i by
// default, mtia300 with KEVOLVE_MTIA_PROFILE=mtia300 (its differences page
// then comes first, beside the engine and programming documents both share).
TEST(PromptBuilder, TheMtiaProfileInUseChoosesItsHardwareDocuments) {
  fixture f;
  prompt_builder b(f.tmpl, f.kb, 12000);
  auto r = f.request(search::memory_mode::compare_siblings);
  r.backend = "mtia_emu";
  r.parent = 2;
  auto parent = item(2, eval::status::ok, 1.1, "// parent\n");
  parent.bottleneck = "memory-bound";
  parent.roofline_fraction = 0.25;
  r.context = {parent};
  ::unsetenv("KEVOLVE_MTIA_PROFILE");
  EXPECT_EQ(default_hardware("mtia_emu"), "mtia2i");
  const built_prompt two = b.build(r);
  EXPECT_TRUE(has(two.documents, "hardware/mtia2i/memory-hierarchy.md"));
  EXPECT_FALSE(has(two.documents, "hardware/mtia300/architecture.md"));
  ::setenv("KEVOLVE_MTIA_PROFILE", "mtia300", 1);
  EXPECT_EQ(default_hardware("mtia_emu"), "mtia300");
  EXPECT_EQ(default_hardware("cpu"), "x86");  // the variable names only the emulator's profile
  const built_prompt three = b.build(r);
  ::unsetenv("KEVOLVE_MTIA_PROFILE");
  EXPECT_TRUE(has(three.documents, "hardware/mtia300/architecture.md"));
  EXPECT_FALSE(has(three.documents, "hardware/mtia2i/memory-hierarchy.md"));  // mtia2i's numbers
  EXPECT_FALSE(has(three.documents, "hardware/mtia2i/architecture.md"));
}

TEST(PromptBuilder, ASmallBudgetKeepsTheMandatoryPartsAndDropsKnowledge) {
  fixture f;
  prompt_builder big(f.tmpl, f.kb, 12000), small(f.tmpl, f.kb, 3000);
  auto r = f.request(search::memory_mode::inherit);
  r.parent = 2;
  auto parent = item(2, eval::status::ok, 1.1, "// parent\n");
  parent.bottleneck = "memory-bound";
  r.context = {parent};
  const built_prompt a = big.build(r), b = small.build(r);
  EXPECT_LT(b.documents.size(), a.documents.size());
  EXPECT_LT(b.tokens, a.tokens);
  EXPECT_NE(b.user.find("// parent"), std::string::npos);
  EXPECT_NE(b.user.find("## How to reply"), std::string::npos);
}

}  // namespace
}  // namespace kevolve::synth
