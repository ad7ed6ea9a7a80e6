// The skill note of the llm synthesizer: when a child improves on its task's
// best, the LLM is asked for a short note about the decisive change from
// the parent (the wording is data: knowledge/prompts/skill_note.md, sections
// `@@ system` and `@@ user` with {{placeholders}}), and its reply is checked
// before it is kept as a skill.
#pragma once

#include <filesystem>
#include <string>

#include "common/error.h"
#include "synth/prompt_builder.h"
#include "synth/synthesizer.h"

namespace kevolve::synth {

class note_prompt {
 public:
  static expected<note_prompt> load(const std::filesystem::path& file = {});
  static std::filesystem::path default_file();
  // The system and user messages asking for a note of at most `max_chars`.
  std::pair<std::string, std::string> build(const note_request& r, int max_chars) const;

 private:
  explicit note_prompt(prompt_template t) : template_(std::move(t)) {}
  prompt_template template_;
};

struct checked_note {
  bool accepted = false;
  std::string note;    // the reply, trimmed (accepted only)
  std::string reason;  // why it was refused
};

// A note is kept when, trimmed, it is not empty and has at most `max_chars`
// characters (UTF-8 code points); otherwise it is refused with the reason.
checked_note check_note(const std::string& reply, int max_chars);

}  // namespace kevolve::synth
