#include <cstdio>

#include "app/commands.h"
#include "app/store_skills.h"
#include "common/fs.h"
#include "knowledge/knowledge_base.h"
#include "store/hdf5_store.h"

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

}  // namespace

int run_kb(const cli::kb_command& cmd) {
  if (cmd.action == "promote") return promote(cmd);
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
