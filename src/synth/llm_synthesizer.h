// The llm synthesizer: the adaptive prompt (prompt_builder) sent through the
// shared LLM client, the reply turned into a kernel (response_parser) and
// checked for the ABI symbol before an evaluation is spent on it. Every
// request is kept in the result (stored with the node). When no endpoint is
// configured, every endpoint is failing or a budget is spent, the builtin
// synthesizer writes the child instead, and the user is told once. When a
// child improves on its task's best, write_note asks the same client for a
// short skill note about the decisive change (synth/note_prompt.h).
#pragma once

#include <memory>
#include <mutex>
#include <set>
#include <string>

#include "knowledge/knowledge_base.h"
#include "llm/client.h"
#include "synth/builtin_synthesizer.h"
#include "synth/note_prompt.h"
#include "synth/prompt_builder.h"

namespace kevolve::synth {

// What every llm synthesizer of a process shares: the client (its endpoint
// state, accounting and budgets), the knowledge base, and the notices
// already given.
struct llm_resources {
  std::shared_ptr<llm::llm_client> client;  // null: no endpoint configured
  std::shared_ptr<const knowledge::knowledge_base> kb;
  int prompt_tokens = 12000;
  int note_chars = 600;  // llm.skill_note_chars (0: no notes)
  llm::notice_sink notice;
  std::mutex mu;
  std::set<std::string> told;
  void tell_once(const std::string& key, const std::string& message);
};

class llm_synthesizer : public synthesizer {
 public:
  static expected<std::unique_ptr<llm_synthesizer>> create(std::shared_ptr<llm_resources> shared);

  std::string name() const override { return "llm"; }
  bool supports(const spec::operator_spec& op, const std::string& backend) const override;
  synthesis_result write(const synthesis_request& request) override;
  note_result write_note(const note_request& request) override;

 private:
  llm_synthesizer(std::shared_ptr<llm_resources> shared, prompt_builder builder, note_prompt notes,
                  std::unique_ptr<builtin_synthesizer> fallback)
      : shared_(std::move(shared)), builder_(std::move(builder)), notes_(std::move(notes)), fallback_(std::move(fallback)) {}
  synthesis_result builtin(const synthesis_request& request, const std::string& why);
  void tell_fallback(const std::string& why);

  std::shared_ptr<llm_resources> shared_;
  prompt_builder builder_;
  note_prompt notes_;
  std::unique_ptr<builtin_synthesizer> fallback_;
};

}  // namespace kevolve::synth
