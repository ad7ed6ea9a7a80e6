#include <cstdio>

#include "app/commands.h"
#include "app/store_skills.h"
#include "common/fs.h"
#include "knowledge/knowledge_base.h"
#include "spec/operator_loader.h"
#include "store/hdf5_store.h"
#include "synth/builtin_synthesizer.h"

namespace kevolve::app {
namespace {

std::string joined(const std::vector<std::string>& v, const char* none = "any") {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ",") + x;
  return s.empty() ? none : s;
}

int promote(const cli::kb_command& cmd) {
  auto record = store::read_store(cmd.store);
  if (!record) return report_error(record.error());
  const auto skills = store_skills(*record, cmd.min_speedup, cmd.store);
  const std::filesystem::path dir = cmd.dir.empty() ? knowledge::knowledge_base::default_root() / "skills" : std::filesystem::path(cmd.dir);
  for (const auto& s : skills) {
    const auto path = dir / s.file;
    std::error_code ec;
    const bool existed = std::filesystem::exists(path, ec);
    if (auto w = write_file_atomic(path, s.text); !w) return report_error(w.error());
    std::printf("%s %s (%s, %.3fx)\n", existed ? "updated" : "wrote", path.c_str(), s.task.c_str(), s.fitness);
  }
  if (skills.empty()) std::printf("no task of %s reached %.3fx: no skill written\n", cmd.store.c_str(), cmd.min_speedup);
  // The new documents must load with the rest of the knowledge base.
  if (cmd.dir.empty())
    if (auto kb = knowledge::knowledge_base::load(); !kb) return report_error(kb.error());
  return exit_ok;
}

// The kernel a builtin template writes at a parameter point (the
// synthesizer's own renderer), for `kevolve eval` of points a search did not
// reach. Every given parameter must be declared with an allowed value.
int render(const cli::kb_command& cmd) {
  auto op = spec::find_operator(cmd.op);
  if (!op) return report_error(op.error());
  const spec::variant* var = cmd.variant.empty() ? &op->variants.front() : op->find_variant(cmd.variant);
  if (!var) return report_error({errc::invalid_input, "--variant: " + op->name + " has no variant '" + cmd.variant + "'"});
  auto synth = synth::builtin_synthesizer::create();
  if (!synth) return report_error(synth.error());
  const auto serving = (*synth)->serving(*op, var, cmd.backend);
  std::string names;
  for (const auto* t : serving) names += (names.empty() ? "" : ", ") + t->name;
  const synth::template_info* t = nullptr;
  for (const auto* s : serving)
    if (cmd.template_name.empty() || s->name == cmd.template_name) {
      t = s;
      break;
    }
  if (!t)
    return report_error({errc::invalid_input, "no builtin template " + (cmd.template_name.empty() ? "" : "'" + cmd.template_name + "' ") +
                                                  "serves " + op->name + " (" + var->name + ") on " + cmd.backend +
                                                  (names.empty() ? "" : "; templates that do: " + names)});
  synth::param_set p = t->space.defaults();
  if (!cmd.params.empty()) {
    const auto given = nlohmann::json::parse(cmd.params, nullptr, false);
    if (given.is_discarded() || !given.is_object())
      return report_error({errc::invalid_input, "--params: expected a JSON object, e.g. '{\"slots\": 2}', got " + cmd.params});
    for (const auto& [name, value] : given.items()) {
      const synth::param_def* d = t->space.find(name);
      if (!d) return report_error({errc::invalid_input, "--params: " + t->name + " has no parameter '" + name + "'"});
      if (d->index_of(value) < 0) {
        std::string allowed;
        for (const auto& v : d->values) allowed += (allowed.empty() ? "" : ", ") + v.dump();
        return report_error({errc::invalid_input, "--params: " + t->name + " parameter '" + name + "' takes " + allowed +
                                                      ", got " + value.dump()});
      }
      p[name] = value;
    }
  }
  const auto k = (*synth)->render_with(*t, *op, p, "kb render");
  if (!k.ok) return report_error({errc::invalid_input, t->name + ": " + k.error});
  std::fwrite(k.code.data(), 1, k.code.size(), stdout);
  return exit_ok;
}

}  // namespace

int run_kb(const cli::kb_command& cmd) {
  if (cmd.action == "promote") return promote(cmd);
  if (cmd.action == "render") return render(cmd);
  auto kb = knowledge::knowledge_base::load();
  if (!kb) return report_error(kb.error());
  if (cmd.action == "list") {
    std::printf("%-44s %-10s %-12s %-10s %s\n", "document", "level", "backends", "hardware", "triggers");
    for (const auto& d : kb->documents())
      std::printf("%-44s %-10s %-12s %-10s %s\n", d.path.c_str(), d.level.c_str(), joined(d.backends).c_str(),
                  joined(d.hardware).c_str(), joined(d.triggers, "-").c_str());
    std::printf("%zu documents in %s\n", kb->documents().size(), knowledge::knowledge_base::default_root().c_str());
    return exit_ok;
  }
  knowledge::query q;
  q.text = cmd.query;
  q.triggers = cmd.triggers;
  q.backend = cmd.backend;
  q.hardware = cmd.hardware;
  q.op_class = cmd.op_class;
  q.levels = {"constraint", "guide", "hardware", "skill"};
  q.limit = size_t(cmd.limit);
  const auto hits = kb->search(q);
  if (hits.empty()) {
    std::printf("no document matches\n");
    return exit_ok;
  }
  for (const auto& h : hits)
    std::printf("%6.2f  %-44s %s%s\n", h.score, h.doc->path.c_str(), h.doc->title.c_str(),
                h.matched.empty() ? "" : ("  [" + joined(h.matched) + "]").c_str());
  return exit_ok;
}

}  // namespace kevolve::app
