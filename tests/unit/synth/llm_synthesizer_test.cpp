// The llm synthesizer over an in-memory fake client: what it does with a
// good reply, an unusable one, a failed request, a spent budget and no
// endpoint, and what it tells the user (once).
#include <gtest/gtest.h>

#include "support/test_env.h"
#include "synth/factory.h"
#include "synth/llm_synthesizer.h"

namespace kevolve::synth {
namespace {

class fake_llm_client : public llm::llm_client {
 public:
  llm::chat_outcome next;
  std::string block;
  int calls = 0;
  std::vector<llm::chat_message> last;
  llm::chat_outcome chat(const std::string&, const std::vector<llm::chat_message>& m) override {
    ++calls;
    last = m;
    return next;
  }
  std::string blocked(const std::string&) const override { return block; }
  llm::spending spent() const override { return {}; }
  llm::spending spent(const std::string&) const override { return {}; }
};

struct fixture {
  spec::operator_spec op = testing::test_operator("ts_softmax");
  std::shared_ptr<fake_llm_client> client = std::make_shared<fake_llm_client>();
  std::vector<std::string> notices;
  std::unique_ptr<synthesizer> make(bool with_client = true) {
    auto r = make_llm_resources(llm::llm_config{}, [this](const std::string& m) { notices.push_back(m); },
                                with_client ? client : nullptr);
    EXPECT_TRUE(r.has_value()) << (r ? "" : r.error().message);
    auto s = llm_synthesizer::create(*r);
    EXPECT_TRUE(s.has_value()) << (s ? "" : s.error().message);
    return std::move(*s);
  }
  synthesis_request request() {
    synthesis_request r;
    r.op = &op;
    r.variant = &op.variants.front();
    r.backend = "cpu";
    return r;
  }
};

llm::chat_outcome replied(const std::string& content) {
  llm::chat_outcome o;
  o.status = llm::chat_status::ok;
  o.endpoint = "coder@test";
  o.model = "coder";
  o.attempts = 1;
  o.reply.content = content;
  o.reply.usage.prompt_tokens = 1000;
  o.reply.usage.completion_tokens = 200;
  return o;
}

const std::string kKernel =
    "Plain rows.\n```cpp\n#include <kevolve/abi.h>\nextern \"C\" int kevolve_kernel(const kv_args* a) { return 0; }\n```\n";

TEST(LlmSynthesizer, AGoodReplyBecomesTheChildWithItsExchange) {
  fixture f;
  auto s = f.make();
  f.client->next = replied(kKernel);
  const synthesis_result r = s->write(f.request());
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.origin, "llm:coder");
  EXPECT_EQ(r.summary, "Plain rows.");
  EXPECT_NE(r.code.find("extern \"C\" int kevolve_kernel"), std::string::npos);
  ASSERT_EQ(r.calls.size(), 1u);
  EXPECT_EQ(r.calls[0].status, "ok");
  EXPECT_EQ(r.calls[0].prompt_tokens, 1000);
  EXPECT_EQ(r.calls[0].reply, kKernel);
  EXPECT_NE(r.calls[0].prompt.find("\"role\":\"system\""), std::string::npos);
  EXPECT_NE(r.calls[0].documents.find("constraints/cpu.md"), std::string::npos);
  ASSERT_EQ(f.client->last.size(), 2u);
  EXPECT_NE(f.client->last[1].content.find("ts_softmax"), std::string::npos);
  EXPECT_TRUE(f.notices.empty());
}

TEST(LlmSynthesizer, AnUnusableReplyIsNotEvaluatedAndSaysWhy) {
  fixture f;
  auto s = f.make();
  f.client->next = replied("I would fuse the passes.");
  const synthesis_result r = s->write(f.request());
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.error, "llm reply unusable: the reply has no fenced code block or diff");
  ASSERT_EQ(r.calls.size(), 1u);
  EXPECT_EQ(r.calls[0].status, "unusable");
  EXPECT_EQ(r.calls[0].error, "the reply has no fenced code block or diff");
}

TEST(LlmSynthesizer, AFailedRequestFallsBackToTheBuiltinForThatChild) {
  fixture f;
  auto s = f.make();
  f.client->next.status = llm::chat_status::failed;
  f.client->next.attempts = 5;
  f.client->next.error = "endpoint coder@test: HTTP 503: overloaded";
  const synthesis_result r = s->write(f.request());
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.origin.rfind("builtin:", 0), 0u) << r.origin;
  EXPECT_NE(r.summary.find("(llm: failed: endpoint coder@test: HTTP 503: overloaded)"), std::string::npos) << r.summary;
  ASSERT_EQ(r.calls.size(), 1u);  // the failed request is kept with the node
  EXPECT_EQ(r.calls[0].attempts, 5);
  EXPECT_TRUE(f.notices.empty());  // the endpoint is still up: nothing to announce
}

TEST(LlmSynthesizer, ASpentBudgetMeansBuiltinSaidOnce) {
  fixture f;
  auto s = f.make();
  f.client->block = "the sweep's token budget is spent (1000 of 900)";
  for (int i = 0; i < 3; ++i) {
    const synthesis_result r = s->write(f.request());
    ASSERT_TRUE(r.ok) << r.error;
    EXPECT_EQ(r.origin.rfind("builtin:", 0), 0u);
    EXPECT_TRUE(r.calls.empty());
    f.client->block = "the sweep's token budget is spent (1000 of 90" + std::to_string(i) + ")";
  }
  EXPECT_EQ(f.client->calls, 0);
  ASSERT_EQ(f.notices.size(), 1u);
  EXPECT_EQ(f.notices[0], "the sweep's token budget is spent (1000 of 900): the builtin synthesizer writes these children instead");
}

TEST(LlmSynthesizer, NoEndpointMeansBuiltinSaidOnce) {
  fixture f;
  auto s = f.make(false);
  for (int i = 0; i < 2; ++i) EXPECT_EQ(s->write(f.request()).origin.rfind("builtin:", 0), 0u);
  ASSERT_EQ(f.notices.size(), 1u);
  EXPECT_NE(f.notices[0].find("no endpoint is configured (llm.endpoints)"), std::string::npos);
}

note_request note_for(const spec::operator_spec& op) {
  note_request n;
  n.task = "ts_softmax/fp32/cpu";
  n.op = &op;
  n.variant = &op.variants.front();
  n.backend = "cpu";
  n.hardware = "x86";
  n.parent.id = 3;
  n.parent.code = "// three passes";
  n.parent.result = eval::status::ok;
  n.parent.fitness = 1.2;
  n.child.id = 7;
  n.child.code = "// one fused pass";
  n.child.result = eval::status::ok;
  n.child.fitness = 2.5;
  n.measurements = "- rows_1024: parent 3.0 us (1.20x, memory-bound), child 1.4 us (2.50x, memory-bound)\n";
  return n;
}

TEST(LlmSynthesizer, ANoteIsAskedWithBothKernelsAndCheckedForLength) {
  fixture f;
  auto s = f.make();
  f.client->next = replied("  Fusing the three passes into one halves the reads.\n");
  note_result r = s->write_note(note_for(f.op));
  EXPECT_EQ(r.status, "accepted");
  EXPECT_EQ(r.note, "Fusing the three passes into one halves the reads.");
  ASSERT_EQ(r.calls.size(), 1u);
  EXPECT_EQ(r.calls[0].purpose, "skill_note");
  EXPECT_EQ(r.calls[0].status, "ok");
  const std::string& user = f.client->last.at(1).content;
  for (const char* part : {"// three passes", "// one fused pass", "Parent: node 3", "Child: node 7", "rows_1024: parent 3.0 us",
                           "at most 600 characters", "ts_softmax"})
    EXPECT_NE(user.find(part), std::string::npos) << part;
  // 601 characters (UTF-8: one code point, two bytes, each) is one too many.
  std::string long_note;
  for (int i = 0; i < 601; ++i) long_note += "\xc3\xa9";
  f.client->next = replied(long_note);
  r = s->write_note(note_for(f.op));
  EXPECT_EQ(r.status, "refused");
  EXPECT_EQ(r.note, "");
  EXPECT_EQ(r.reason, "the note has 601 characters, over the limit of 600 (llm.skill_note_chars)");
  ASSERT_EQ(r.calls.size(), 1u);
  EXPECT_EQ(r.calls[0].error, r.reason);
  EXPECT_EQ(r.calls[0].status, "unusable");
  f.client->next = replied(" \n ");
  EXPECT_EQ(s->write_note(note_for(f.op)).reason, "the reply is empty");
}

TEST(LlmSynthesizer, NoNoteWithoutEndpointOrBudgetAndTheBuiltinWritesNone) {
  fixture f;
  auto s = f.make();
  f.client->block = "the sweep's token budget is spent (1000 of 900)";
  note_result r = s->write_note(note_for(f.op));
  EXPECT_EQ(r.status, "");
  EXPECT_EQ(r.reason, "the sweep's token budget is spent (1000 of 900)");
  EXPECT_TRUE(r.calls.empty());
  EXPECT_EQ(f.client->calls, 0);
  EXPECT_EQ(f.make(false)->write_note(note_for(f.op)).status, "");
  auto builtin = make_synthesizer("builtin");
  ASSERT_TRUE(builtin.has_value());
  EXPECT_EQ((*builtin)->write_note(note_for(f.op)).status, "");
}

TEST(LlmSynthesizer, TheFactoryKnowsBothNames) {
  EXPECT_TRUE(make_synthesizer("builtin").has_value());
  auto s = make_synthesizer("llm");
  ASSERT_TRUE(s.has_value()) << s.error().message;
  EXPECT_EQ((*s)->name(), "llm");
  auto bad = make_synthesizer("gpt");
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().message, "unknown synthesizer 'gpt' (this build has: builtin, llm)");
}

}  // namespace
}  // namespace kevolve::synth
