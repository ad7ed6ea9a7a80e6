// Parameter spaces, headers, rules and crossover of the builtin synthesizer,
// without compiling anything.
#include <gtest/gtest.h>

#include "synth/mutation.h"
#include "synth/template_render.h"

namespace kevolve::synth {
namespace {

param_space demo_space() {
  auto s = param_space::from_json(nlohmann::json::parse(R"({
    "vec": {"values": [4, 8, 16], "default": 8},
    "unroll": {"values": [1, 2, 4], "default": 2},
    "nt": {"values": [0, 1], "default": 0},
    "algo": {"values": ["three_pass", "online"], "default": "three_pass"}})"),
                                  "demo");
  EXPECT_TRUE(s.has_value());
  return s ? *s : param_space{};
}

rule_set shipped_rules() {
  auto r = rule_set::load(std::filesystem::path(KEVOLVE_TEST_SOURCE_DIR) / "knowledge/templates/rules.json");
  EXPECT_TRUE(r.has_value()) << (r ? "" : r.error().message);
  return r ? *r : rule_set{};
}

TEST(TemplateHeader, ParametersAreRecoveredFromTheFirstLine) {
  const param_set p = {{"vec", 16}, {"algo", "online"}};
  const std::string code = format_header("cpu/row_softmax", p) + "\n#include <cmath>\n";
  EXPECT_EQ(code.substr(0, code.find('\n')), R"(// kevolve-template: cpu/row_softmax {"algo":"online","vec":16})");
  auto h = parse_header(code);
  ASSERT_TRUE(h.has_value());
  EXPECT_EQ(h->name, "cpu/row_softmax");
  EXPECT_EQ(h->params, p);
  EXPECT_FALSE(parse_header("// an LLM kernel\nint x;").has_value());
  EXPECT_FALSE(parse_header("// kevolve-template: cpu/x {broken").has_value());
}

TEST(ParamSpace, MutationStaysWithinTheDeclaredSpace) {
  const param_space s = demo_space();
  rng r(7);
  param_set p = s.defaults();
  for (int i = 0; i < 500; ++i) {
    const param_set before = p;
    const std::string changed = s.mutate_one(p, r);
    ASSERT_TRUE(s.contains(p)) << p.dump();
    EXPECT_NE(p, before) << changed;
  }
  for (int i = 0; i < 100; ++i) EXPECT_TRUE(s.contains(s.sample(r)));
  EXPECT_EQ(s.normalize({{"vec", 5}, {"bogus", 1}}), s.defaults());
  param_set top = {{"vec", 16}, {"unroll", 4}, {"nt", 1}, {"algo", "online"}};
  EXPECT_FALSE(s.step(top, "vec", +1));
  EXPECT_EQ(top["vec"], 16);
}

TEST(Rules, CompileFailedParentBacksOffToTheLastCorrectParameters) {
  const param_space s = demo_space();
  const param_set ok_before = {{"vec", 8}, {"unroll", 2}, {"nt", 0}, {"algo", "three_pass"}};
  const param_set failed = {{"vec", 8}, {"unroll", 4}, {"nt", 0}, {"algo", "three_pass"}};
  context_item parent;
  parent.result = eval::status::compile_failed;
  parent.compile_diagnostics = "error: 'foo' was not declared in this scope";
  for (uint64_t seed = 0; seed < 20; ++seed) {
    rng r(seed);
    const step_result out = inherit_step(s, failed, parent, {ok_before}, shipped_rules(), r);
    EXPECT_EQ(out.params["unroll"], 2) << out.summary;  // the failing change is undone
    EXPECT_NE(out.params, failed);
    EXPECT_NE(out.summary.find("compile_error_back_off"), std::string::npos) << out.summary;
  }
}

TEST(Rules, MemoryBoundLowRooflineWidensVectorsAndWorkPerStep) {
  const param_space s = demo_space();
  context_item parent;
  parent.result = eval::status::ok;
  parent.bottleneck = "memory-bound";
  parent.roofline_fraction = 0.2;
  rng r(3);
  const param_set p = s.defaults();
  const step_result out = inherit_step(s, p, parent, {}, shipped_rules(), r);
  EXPECT_EQ(out.params["vec"], 16) << out.summary;
  EXPECT_EQ(out.params["unroll"], 4) << out.summary;
  EXPECT_NE(out.summary.find("memory_bound_low_bandwidth"), std::string::npos);
  // Already at the widest: the rule's later actions apply instead.
  param_set wide = {{"vec", 16}, {"unroll", 4}, {"nt", 0}, {"algo", "three_pass"}};
  const step_result out2 = inherit_step(s, wide, parent, {}, shipped_rules(), r);
  EXPECT_EQ(out2.params["nt"], 1) << out2.summary;
}

TEST(Rules, SpillDiagnosticsUnrollLess) {
  const param_space s = demo_space();
  context_item parent;
  parent.result = eval::status::ok;
  parent.compile_diagnostics = "note: 12 bytes of register SPILL in loop";
  rng r(1);
  const step_result out = inherit_step(s, s.defaults(), parent, {}, shipped_rules(), r);
  EXPECT_EQ(out.params["unroll"], 1) << out.summary;
}

TEST(Crossover, ChildMixesBothParents) {
  const param_space s = demo_space();
  const param_set a = {{"vec", 4}, {"unroll", 1}, {"nt", 0}, {"algo", "three_pass"}};
  const param_set b = {{"vec", 16}, {"unroll", 4}, {"nt", 1}, {"algo", "online"}};
  for (uint64_t seed = 0; seed < 30; ++seed) {
    rng r(seed);
    const param_set c = crossover(s, a, b, r).params;
    ASSERT_TRUE(s.contains(c));
    EXPECT_NE(c, a);
    EXPECT_NE(c, b);
    for (auto it = c.begin(); it != c.end(); ++it)
      EXPECT_TRUE(it.value() == a[it.key()] || it.value() == b[it.key()]) << it.key();
  }
}

TEST(Siblings, MovesAwayFromWorseSiblingsValues) {
  const param_space s = demo_space();
  const param_set best = {{"vec", 8}, {"unroll", 2}, {"nt", 0}, {"algo", "three_pass"}};
  const param_set worse = {{"vec", 16}, {"unroll", 2}, {"nt", 0}, {"algo", "three_pass"}};
  for (uint64_t seed = 0; seed < 20; ++seed) {
    rng r(seed);
    const param_set c = sibling_step(s, best, {worse}, r).params;
    EXPECT_NE(c["vec"], 16) << c.dump();
    EXPECT_EQ(changed_keys(best, c).size(), 1u) << c.dump();
  }
}

}  // namespace
}  // namespace kevolve::synth
