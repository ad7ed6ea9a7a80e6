#include "knowledge/skills.h"

#include <cstdio>

#include <nlohmann/json.hpp>

#include "eval/backends/registry.h"

namespace kevolve::knowledge {
namespace {

std::string fixed(double v, int digits) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

// What a node's code says about itself: the builtin's template header, else
// the LLM's one-line summary (the reply's first line), else its origin.
std::string what_changed(const store::task_record& t, const search::node& n) {
  if (n.code.rfind("// kevolve-template:", 0) == 0) return "`" + n.code.substr(3, n.code.find('\n') - 3) + "`";
  for (auto it = t.llm.rbegin(); it != t.llm.rend(); ++it)
    if (it->node == n.id && it->status == "ok" && it->purpose == "kernel") {
      std::string first = it->reply.substr(0, it->reply.find('\n'));
      if (first.rfind("```", 0) == 0) first.clear();
      if (first.size() > 240) first = first.substr(0, 240) + "...";
      if (!first.empty()) return first;
    }
  return n.origin;
}

// The builtin template and parameters a node's first line names
// ("// kevolve-template: cpu/row_softmax {...}"), or false.
bool template_of(const search::node& n, std::string& name, nlohmann::json& params) {
  static const std::string prefix = "// kevolve-template: ";
  if (n.code.rfind(prefix, 0) != 0) return false;
  const std::string line = n.code.substr(prefix.size(), n.code.find('\n') - prefix.size());
  const size_t space = line.find(' ');
  name = line.substr(0, space);
  params = space == std::string::npos ? nlohmann::json::object()
                                      : nlohmann::json::parse(line.substr(space + 1), nullptr, false);
  return !name.empty() && params.is_object();
}

// The accepted notes the LLM wrote about the task's improvements, with the
// nodes and fitness they rest on ("" when none).
std::string notes_of(const store::task_record& t) {
  std::string out;
  for (const store::skill_note& k : t.skills) {
    if (!k.accepted) continue;
    std::string note = k.note;
    for (char& c : note)
      if (c == '\n' || c == '\r') c = ' ';
    const auto evidence = nlohmann::json::parse(k.evidence, nullptr, false);
    const std::string model = evidence.is_object() ? evidence.value("model", std::string()) : std::string();
    out += "- node " + std::to_string(k.parent) + " (" + fixed(k.parent_fitness, 3) + "x) -> node " + std::to_string(k.node) +
           " (" + fixed(k.child_fitness, 3) + "x" + (model.empty() ? "" : ", " + model) + ", " + k.hardware + "): " + note +
           "\n";
  }
  return out.empty() ? "" : "What the LLM said about the decisive changes (its notes, checked for length):\n\n" + out + "\n";
}

}  // namespace

std::vector<skill_doc> distill_skills(const store::sweep_record& r, double min_speedup,
                                      const std::function<std::string(const std::string&)>& op_class,
                                      const std::string& store_name) {
  std::vector<skill_doc> out;
  for (const auto& t : r.tasks) {
    const search::tree& tree = t.search.nodes;
    const search::node_id best = tree.best();
    if (best == search::kNoNode || tree.at(best).fitness < min_speedup) continue;
    // The improving steps on the best kernel's line: each beats every
    // correct ancestor before it.
    std::string steps;
    double so_far = 0;
    int count = 0;
    nlohmann::json moves = nlohmann::json::array();
    for (search::node_id id : tree.path(best)) {
      const search::node& n = tree.at(id);
      if (!n.ok() || n.fitness <= so_far) continue;
      steps += "- node " + std::to_string(id) + ", " + fixed(n.fitness, 3) + "x (" + n.origin + "): " + what_changed(t, n) + "\n";
      so_far = n.fitness;
      ++count;
      std::string name;
      nlohmann::json params;
      if (template_of(n, name, params))
        moves.push_back({{"node", id}, {"fitness", n.fitness}, {"template", name}, {"params", params}});
    }
    const search::node& b = tree.at(best);
    const std::string cls = op_class ? op_class(t.op) : "";
    skill_doc s;
    s.task = t.id;
    s.fitness = b.fitness;
    s.file = t.op + "-" + t.variant + "-" + t.backend + ".md";
    s.text = "---\n";
    s.text += "title: \"" + t.op + " (" + t.variant + ") on " + t.backend + ": " + fixed(b.fitness, 2) +
              "x over the baseline\"\n";
    s.text += "level: skill\nbackends: [" + t.backend + "]\nhardware: [" + eval::hardware_tag_of(t.backend) + "]\n";
    if (!cls.empty()) s.text += "classes: [" + cls + "]\n";
    s.text += "tags: [" + t.op + (cls.empty() ? "" : ", " + cls) + "]\n---\n";
    s.text += "# What worked for " + t.op + " on " + t.backend + "\n\n";
    s.text += "Evidence: store `" + store_name + "` (created " + r.created_at + "), task `" + t.id + "`, " +
              std::to_string(t.search.evaluations) + " evaluations, best node " + std::to_string(best) + " at " +
              fixed(b.fitness, 3) + "x over `" + (t.baseline.empty() ? std::string("the baseline") : t.baseline) +
              "`.\n\n";
    s.text += "The steps that improved on the best kernel's line (" + std::to_string(count) + "):\n\n" + steps + "\n";
    s.text += notes_of(t);
    s.text += "Start from the last step's design for operators of the same class on this backend, and verify it at "
              "the new operator's shapes.\n";
    // For the builtin synthesizer (src/synth/skill_priors.h): the best
    // kernel's template and parameters, when it came from a template.
    std::string name;
    nlohmann::json params;
    if (template_of(b, name, params)) {
      nlohmann::json block = {{"operator", t.op},    {"class", cls},       {"variant", t.variant},
                              {"backend", t.backend}, {"hardware", eval::hardware_tag_of(t.backend)},
                              {"fitness", b.fitness}, {"template", name},   {"params", params},
                              {"steps", moves}};
      s.text += "\nFor the builtin synthesizer (its first samples and sampling bias for this class):\n\n```" +
                std::string(kSkillBlock) + "\n" + block.dump() + "\n```\n";
    }
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace kevolve::knowledge
