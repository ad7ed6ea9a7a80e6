// Skills written back: from a finished sweep's store, what paid off in each
// task that beat its baseline, as a knowledge document (level: skill) that
// later prompts retrieve for operators of the same class and backend.
// `kevolve kb promote STORE` writes them to knowledge/skills/.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "store/sweep_record.h"

namespace kevolve::knowledge {

// The info string of the fenced JSON block in a skill document that the
// builtin synthesizer reads: {"operator", "class", "variant", "backend",
// "hardware", "fitness", "template", "params", "steps": [{"node",
// "fitness", "template", "params"}, ...]} (the best kernel's template and
// parameters, and the improving steps that led there).
constexpr const char* kSkillBlock = "kevolve-skill";

struct skill_doc {
  std::string file;  // "<operator>-<variant>-<backend>.md"
  std::string text;  // front matter + body
  std::string task;
  double fitness = 0;
};

// One skill per task whose best kernel reaches `min_speedup` over the
// baseline: the improving steps on the best kernel's line (origin, template
// parameters or the LLM's own one-line summary, fitness), with the store and
// node ids as evidence; the accepted notes the LLM wrote about the task's
// improvements (store::skill_note), each with its nodes, fitness, model
// and hardware; when the best kernel came from a builtin template,
// also a `kevolve-skill` block with its template and parameters. `op_class` maps an operator name to its class ("" if
// unknown); `store_name` is quoted as the evidence's source.
std::vector<skill_doc> distill_skills(const store::sweep_record& r, double min_speedup,
                                      const std::function<std::string(const std::string&)>& op_class,
                                      const std::string& store_name);

}  // namespace kevolve::knowledge
