// The one adaptive prompt of the llm synthesizer, assembled within a token
// budget from: the operator's YAML and shapes, the backend's ABI and
// constraints (knowledge/constraints/), documents retrieved for the parent's
// diagnosis, the memory mode's context (trajectory, siblings, merge partner,
// or a clean slate), the parent's code and verdict, and skills. The wording
// is data: knowledge/prompts/universal.md, sections introduced by "@@ name"
// lines, with {{placeholders}}.
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/error.h"
#include "knowledge/knowledge_base.h"
#include "synth/synthesizer.h"

namespace kevolve::synth {

class prompt_template {
 public:
  // Errors name the file and the missing section. `required`: the sections
  // the file must have (default: those of universal.md).
  static expected<prompt_template> load(const std::filesystem::path& file = {},
                                        const std::vector<std::string>& required = {});
  static std::filesystem::path default_file();
  // The section with {{name}} replaced from `vars` (missing names: "").
  std::string render(const std::string& section, const std::map<std::string, std::string>& vars) const;

 private:
  std::map<std::string, std::string> sections_;
};

struct built_prompt {
  std::string system, user;
  std::vector<std::string> documents;  // knowledge paths included
  std::vector<std::string> triggers;   // the diagnosis
  int tokens = 0;                      // estimate: 4 characters a token
  bool over_budget = false;            // the mandatory parts alone exceed the budget
  double ms = 0;                       // assembly time
};

// The hardware profile a backend's prompt speaks about by default.
std::string default_hardware(const std::string& backend);
// At most `chars` characters of `s`: its head and tail, with what was cut said.
std::string clip(const std::string& s, size_t chars);
// A candidate's verdict in one line (and the compiler's output, if any).
std::string verdict_line(const context_item& c);

class prompt_builder {
 public:
  prompt_builder(prompt_template t, std::shared_ptr<const knowledge::knowledge_base> kb, int token_budget);
  built_prompt build(const synthesis_request& request);

 private:
  const std::string& operator_yaml(const spec::operator_spec& op);
  const std::string& abi_header();

  prompt_template template_;
  std::shared_ptr<const knowledge::knowledge_base> kb_;
  int budget_;
  std::map<std::string, std::string> yaml_cache_;
  std::string abi_header_;
};

}  // namespace kevolve::synth
