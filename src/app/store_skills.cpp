#include "app/store_skills.h"

#include <map>

#include "common/fs.h"
#include "spec/operator_loader.h"
#include "spec/sweep_spec.h"

namespace kevolve::app {

std::vector<knowledge::skill_doc> store_skills(const store::sweep_record& record, double min_speedup,
                                               const std::string& name) {
  // Operator classes: from the catalog, or from the operator files the
  // sweep's config named (operators known only from a YAML path).
  std::map<std::string, std::string> classes;
  if (auto dir = temp_dir::create("kevolve-skills-")) {
    const auto f = dir->path() / "sweep.yaml";
    if (write_file_atomic(f, record.config_yaml))
      if (auto sweep = spec::load_sweep(f))
        for (const auto& entry : sweep->operators)
          if (auto op = spec::find_operator(entry)) classes[op->name] = op->op_class;
  }
  auto op_class = [&classes](const std::string& op_name) {
    if (auto it = classes.find(op_name); it != classes.end()) return it->second;
    auto op = spec::find_operator(op_name);
    return op ? op->op_class : std::string();
  };
  return knowledge::distill_skills(record, min_speedup, op_class, name);
}

}  // namespace kevolve::app
