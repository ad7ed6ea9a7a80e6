// Synthesizers by the name a sweep config uses.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "common/error.h"
#include "llm/config.h"
#include "llm/client.h"
#include "synth/synthesizer.h"

namespace kevolve::synth {

struct llm_resources;

// The LLM side of a process, shared by every "llm" synthesizer it makes: a
// client for `config` (none when it has no endpoints), the knowledge base
// and the prompt budget. `notice` gets the once-only messages (default:
// stderr). Errors: the knowledge base or the prompt template is broken.
expected<std::shared_ptr<llm_resources>> make_llm_resources(const llm::llm_config& config, llm::notice_sink notice = {},
                                                            std::shared_ptr<llm::llm_client> client = {});
// What make_synthesizer("llm") uses from now on (kevolve run sets it from
// the sweep's `llm:` before the synthesizer pool starts). Without it, "llm"
// has no endpoint and writes with the builtin synthesizer.
void set_llm_resources(std::shared_ptr<llm_resources> resources);

// A skill document that is not in knowledge/skills/: distilled from a
// `--seed-from` store. `path` names it in prompts ("<store>#<file>").
struct seed_skill {
  std::string path, text;
};
// The skills every synthesizer made from now on (and the llm resources'
// knowledge base) use as if they were promoted: the builtin synthesizer's
// priors, the llm prompts' retrieved skills. kevolve run sets them from its
// --seed-from stores before the synthesizer pool starts. Errors: a document
// that does not parse (its path named).
expected<void> set_seed_skills(std::vector<seed_skill> skills);

class builtin_synthesizer;
// The builtin synthesizer with the knowledge's skills and the seed skills
// (also the llm synthesizer's fallback).
expected<std::unique_ptr<builtin_synthesizer>> make_builtin_synthesizer();

// "builtin": templates from $KEVOLVE_HOME/knowledge/templates.
// "llm": the llm synthesizer on the process's llm_resources.
expected<std::unique_ptr<synthesizer>> make_synthesizer(const std::string& name);

}  // namespace kevolve::synth
