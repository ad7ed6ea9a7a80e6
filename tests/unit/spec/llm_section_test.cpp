// The sweep YAML's `llm:` section: values, defaults, and mistakes named by
// file, line and key (never echoing what may be a pasted API key).
#include <fstream>

#include <gtest/gtest.h>

#include "common/fs.h"
#include "common/paths.h"
#include "spec/sweep_spec.h"

namespace kevolve::spec {
namespace {

class LlmSection : public ::testing::Test {
 protected:
  void SetUp() override {
    auto d = temp_dir::create("kevolve-llm-spec-");
    ASSERT_TRUE(d.has_value());
    dir_ = std::make_unique<temp_dir>(std::move(*d));
  }
  expected<sweep_spec> load(const std::string& llm) {
    const auto f = dir_->path() / "sweep.yaml";
    std::ofstream(f) << "sweep:\n  operators: [softmax]\n  synthesizer: llm\nsearch:\n  stop: {max_evaluations: 5}\n" << llm;
    return load_sweep(f);
  }
  std::unique_ptr<temp_dir> dir_;
};

TEST_F(LlmSection, EndpointsBudgetsAndDefaults) {
  auto s = load(
      "llm:\n"
      "  max_in_flight: 16\n"
      "  budget: {tokens: 2000000, cost: 25, task_tokens: 100000}\n"
      "  endpoints:\n"
      "    - base_url: https://api.example.com/v1\n"
      "      model: big\n"
      "      api_key_env: EXAMPLE_KEY\n"
      "      weight: 1\n"
      "      headers: {X-Team: kernels}\n"
      "      temperature: 0.2\n"
      "      max_tokens: 8192\n"
      "      max_concurrency: 2\n"
      "      input_cost_per_mtok: 3\n"
      "    - base_url: http://127.0.0.1:8000/v1\n"
      "      model: small\n"
      "      weight: 4\n");
  ASSERT_TRUE(s.has_value()) << s.error().message;
  EXPECT_EQ(s->synthesizer, "llm");
  const auto& l = s->llm;
  EXPECT_EQ(l.max_in_flight, 16);
  EXPECT_EQ(l.budget.tokens, 2000000);
  EXPECT_EQ(l.budget.cost, 25);
  EXPECT_EQ(l.budget.task_tokens, 100000);
  ASSERT_EQ(l.endpoints.size(), 2u);
  EXPECT_EQ(l.endpoints[0].api_key_env, "EXAMPLE_KEY");
  EXPECT_EQ(l.endpoints[0].headers.at("X-Team"), "kernels");
  EXPECT_EQ(l.endpoints[0].max_tokens, 8192);
  EXPECT_EQ(l.endpoints[0].max_concurrency, 2);
  EXPECT_DOUBLE_EQ(l.endpoints[0].temperature, 0.2);
  EXPECT_EQ(l.endpoints[1].api_key_env, "");
  EXPECT_EQ(l.endpoints[1].weight, 4);
  EXPECT_EQ(l.endpoints[1].max_tokens, 4096);  // default
}

TEST_F(LlmSection, WithoutEndpointsTheLlmSynthesizerIsAccepted) {
  auto s = load("");
  ASSERT_TRUE(s.has_value()) << s.error().message;
  EXPECT_TRUE(s->llm.endpoints.empty());
}

TEST_F(LlmSection, MistakesNameFileLineAndKey) {
  auto s = load(
      "llm:\n"
      "  endpoints:\n"
      "    - base_url: api.example.com\n"
      "      model: m\n"
      "      api_key_env: sk-live-abcdef0123456789\n"
      "      temperature: 3\n"
      "      headers: {Authorization: Bearer x}\n"
      "      moddel: typo\n");
  ASSERT_FALSE(s.has_value());
  const std::string& m = s.error().message;
  EXPECT_NE(m.find("sweep.yaml:8: 'llm.endpoints[0].base_url' must start with http:// or https://"), std::string::npos) << m;
  EXPECT_NE(m.find("sweep.yaml:10: 'llm.endpoints[0].api_key_env' must be the NAME of an environment variable"), std::string::npos) << m;
  EXPECT_NE(m.find("'llm.endpoints[0].temperature' must be between 0 and 2, got \"3\""), std::string::npos) << m;
  EXPECT_NE(m.find("'llm.endpoints[0].headers.Authorization' may not be set here"), std::string::npos) << m;
  EXPECT_NE(m.find("'llm.endpoints[0].moddel' is not a known key"), std::string::npos) << m;
  EXPECT_EQ(m.find("sk-live"), std::string::npos) << m;
}

TEST_F(LlmSection, SkillNoteLengthIsConfigurableWithinRange) {
  auto s = load("");
  ASSERT_TRUE(s.has_value()) << s.error().message;
  EXPECT_EQ(s->llm.skill_note_chars, 600);  // default
  s = load("llm:\n  skill_note_chars: 0\n");
  ASSERT_TRUE(s.has_value()) << s.error().message;
  EXPECT_EQ(s->llm.skill_note_chars, 0);  // no notes
  s = load("llm:\n  skill_note_chars: -5\n");
  ASSERT_FALSE(s.has_value());
  EXPECT_NE(s.error().message.find("sweep.yaml:7: 'llm.skill_note_chars' must be between 0 and 20000, got \"-5\""),
            std::string::npos)
      << s.error().message;
}

TEST_F(LlmSection, AnUnknownSynthesizerIsRefused) {
  const auto f = dir_->path() / "s.yaml";
  std::ofstream(f) << "sweep:\n  operators: [softmax]\n  synthesizer: gpt\nsearch:\n  stop: {max_evaluations: 5}\n";
  auto s = load_sweep(f);
  ASSERT_FALSE(s.has_value());
  EXPECT_NE(s.error().message.find("'sweep.synthesizer' must be builtin or llm, got \"gpt\""), std::string::npos)
      << s.error().message;
}

}  // namespace
}  // namespace kevolve::spec

namespace kevolve::spec {
namespace {

TEST(LlmExample, TheShippedExampleLoads) {
  auto s = load_sweep(data_root() / "config" / "llm-example.yaml");
  ASSERT_TRUE(s.has_value()) << s.error().message;
  EXPECT_EQ(s->synthesizer, "llm");
  ASSERT_EQ(s->llm.endpoints.size(), 2u);
  EXPECT_EQ(s->llm.endpoints[1].api_key_env, "OPENAI_API_KEY");
}

}  // namespace
}  // namespace kevolve::spec
