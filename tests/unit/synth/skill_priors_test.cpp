// Skills as priors of the builtin synthesizer: the `kevolve-skill` block of
// a promoted skill document decides the root's first children (as-is for the
// same template, carried over by parameter name to another template of the
// same class), biases later fresh samples, stays deterministic per seed, and
// a malformed block is an error naming the file.
#include <gtest/gtest.h>

#include <fstream>

#include "common/fs.h"
#include "spec/operator_loader.h"
#include "synth/builtin_synthesizer.h"
#include "synth/template_render.h"

namespace kevolve::synth {
namespace {

namespace fs = std::filesystem;
const fs::path kRoot = KEVOLVE_TEST_SOURCE_DIR;

// A skill learned on softmax whose parameters are all off their defaults.
const char* kSoftmaxSkill = R"(---
title: "softmax (fp32) on cpu: 2.00x over the baseline"
level: skill
backends: [cpu]
classes: [row_reduction]
---
# What worked

```kevolve-skill
{"operator":"softmax","class":"row_reduction","variant":"fp32","backend":"cpu","hardware":"x86","fitness":2.0,
 "template":"cpu/row_softmax","params":{"vec":8,"unroll":2,"schedule":"dynamic","chunk":4,"nt":0,"algo":"online"},
 "steps":[]}
```
)";

struct skill_dir {
  fs::path dir;
  explicit skill_dir(const std::string& text) {
    dir = fs::temp_directory_path() / ("kevolve-skills-" + std::to_string(::getpid()) + "-" +
                                       std::to_string(reinterpret_cast<uintptr_t>(this)));
    fs::create_directories(dir);
    std::ofstream(dir / "softmax-fp32-cpu.md") << text;
  }
  ~skill_dir() { fs::remove_all(dir); }
};

spec::operator_spec load(const fs::path& yaml) {
  auto o = spec::load_operator(yaml);
  EXPECT_TRUE(o.has_value()) << (o ? "" : o.error().message);
  return o ? *o : spec::operator_spec{};
}

synthesis_result root_child(builtin_synthesizer& s, const spec::operator_spec& o, int sibling, uint64_t seed,
                            const std::string& backend = "cpu") {
  synthesis_request req;
  req.op = &o;
  req.variant = &o.variants.front();
  req.backend = backend;
  req.mode = search::memory_mode::reset;
  req.parent = search::kRoot;
  req.sibling_index = sibling;
  req.seed = seed;
  return s.write(req);
}

std::unique_ptr<builtin_synthesizer> make(const fs::path& skills) {
  auto s = builtin_synthesizer::create(kRoot / "knowledge/templates", skills);
  EXPECT_TRUE(s.has_value()) << (s ? "" : s.error().message);
  return s ? std::move(*s) : nullptr;
}

TEST(SkillPriors, FirstRootChildOfASimilarOperatorTakesTheSkill) {
  skill_dir d(kSoftmaxSkill);
  auto s = make(d.dir);
  ASSERT_TRUE(s);
  ASSERT_EQ(s->skills().priors().size(), 1u);
  // ts_softmax: another operator (other shapes) that the same template serves.
  const auto ts = load(kRoot / "tests/data/operators/ts_softmax.yaml");
  const auto r = root_child(*s, ts, 0, 12345);
  ASSERT_TRUE(r.ok) << r.error;
  const auto h = parse_header(r.code);
  ASSERT_TRUE(h);
  EXPECT_EQ(h->name, "cpu/row_softmax");
  EXPECT_EQ(h->params, nlohmann::json::parse(
                           R"({"vec":8,"unroll":2,"schedule":"dynamic","chunk":4,"nt":0,"algo":"online"})"));
  EXPECT_NE(r.summary.find("skill softmax-fp32-cpu.md"), std::string::npos) << r.summary;
}

TEST(SkillPriors, CarriedOverByParameterNameToATemplateOfTheSameClass) {
  skill_dir d(kSoftmaxSkill);
  auto s = make(d.dir);
  ASSERT_TRUE(s);
  const auto rms = load(kRoot / "tests/data/operators/ts_rmsnorm.yaml");
  const auto r = root_child(*s, rms, 0, 7);
  ASSERT_TRUE(r.ok) << r.error;
  const auto h = parse_header(r.code);
  ASSERT_TRUE(h);
  EXPECT_EQ(h->name, "cpu/row_rmsnorm");
  // rmsnorm has no `algo`: the shared parameters carry over, nothing else.
  EXPECT_EQ(h->params, nlohmann::json::parse(R"({"vec":8,"unroll":2,"schedule":"dynamic","chunk":4,"nt":0})"));
  EXPECT_NE(r.summary.find("carried over from cpu/row_softmax"), std::string::npos) << r.summary;
}

TEST(SkillPriors, OtherClassesAndBackendsAreUntouched) {
  skill_dir d(kSoftmaxSkill);
  auto with = make(d.dir);
  auto without = make({});
  ASSERT_TRUE(with && without);
  const auto gelu = load(kRoot / "tests/data/operators/ts_bias_gelu.yaml");
  const auto softmax = load(kRoot / "tests/data/operators/ts_softmax.yaml");
  for (uint64_t seed = 0; seed < 20; ++seed) {
    EXPECT_EQ(root_child(*with, gelu, 0, seed).code, root_child(*without, gelu, 0, seed).code);
    EXPECT_EQ(root_child(*with, softmax, 0, seed, "cuda").code, root_child(*without, softmax, 0, seed, "cuda").code);
  }
}

TEST(SkillPriors, LaterFreshSamplesLeanOnTheSkillDeterministically) {
  skill_dir d(kSoftmaxSkill);
  auto s = make(d.dir);
  ASSERT_TRUE(s);
  const auto ts = load(kRoot / "tests/data/operators/ts_softmax.yaml");
  int around = 0;
  for (uint64_t seed = 0; seed < 200; ++seed) {
    const auto a = root_child(*s, ts, 5, seed);
    ASSERT_TRUE(a.ok) << a.error;
    EXPECT_EQ(a.code, root_child(*s, ts, 5, seed).code) << "seed " << seed;
    if (a.summary.find("around skill softmax-fp32-cpu.md") != std::string::npos) {
      ++around;
      // One or two parameters away from the skill.
      const auto h = parse_header(a.code);
      ASSERT_TRUE(h);
      const auto diff = changed_keys(h->params, nlohmann::json::parse(
          R"({"vec":8,"unroll":2,"schedule":"dynamic","chunk":4,"nt":0,"algo":"online"})"));
      EXPECT_GE(diff.size(), 1u);
      EXPECT_LE(diff.size(), 2u);
    }
  }
  // kSkillBias of the fresh samples (0.5): between 30 % and 70 % of 200.
  EXPECT_GT(around, 60);
  EXPECT_LT(around, 140);
}

TEST(SkillPriors, MalformedBlockNamesTheFile) {
  skill_dir d("---\ntitle: x\nlevel: skill\n---\n```kevolve-skill\n{\"backend\":\"cpu\",\"template\":\"cpu/row_softmax\"}\n```\n");
  auto s = builtin_synthesizer::create(kRoot / "knowledge/templates", d.dir);
  ASSERT_FALSE(s.has_value());
  EXPECT_NE(s.error().message.find("softmax-fp32-cpu.md:5: 'kevolve-skill' block: 'params' must be"),
            std::string::npos)
      << s.error().message;
}

TEST(SkillPriors, DocumentsWithoutABlockAddNothing) {
  skill_dir d("---\ntitle: x\nlevel: skill\n---\nan llm note only\n");
  auto s = make(d.dir);
  ASSERT_TRUE(s);
  EXPECT_TRUE(s->skills().empty());
}

}  // namespace
}  // namespace kevolve::synth
