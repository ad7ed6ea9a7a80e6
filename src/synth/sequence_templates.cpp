#include "synth/sequence_templates.h"

#include "synth/sequence_compose.h"
#include "synth/template_render.h"

namespace kevolve::synth {

const template_info* sequence_templates::serving(const spec::operator_spec& op, const std::string& backend,
                                                 const part_serving& serve) {
  if (op.parts.empty() || !sequence_backend(backend)) return nullptr;
  std::vector<const template_info*> parts;
  std::string name = "sequence:";
  for (size_t i = 0; i < op.parts.size(); ++i) {
    const auto ts = serve(spec::part_operator(op, i));
    if (ts.empty()) return nullptr;
    parts.push_back(ts.front());
    name += (i ? "+" : "") + ts.front()->name;
  }
  std::lock_guard<std::mutex> lock(mutex_);
  auto& slot = by_name_[name];
  if (!slot) {
    auto c = std::make_unique<composite>();
    c->parts = parts;
    c->info.name = name;
    c->info.backend = backend;
    c->info.op_class = "sequence";
    c->info.description = "the parts' templates run in order";
    std::vector<param_def> defs;
    for (size_t i = 0; i < parts.size(); ++i)
      for (const auto& d : parts[i]->space.defs()) {
        param_def p = d;
        p.name = part_param(i, d.name);
        p.doc = "part " + std::to_string(i) + " (" + parts[i]->name + "): " + d.doc;
        defs.push_back(std::move(p));
      }
    c->info.space = param_space(std::move(defs));
    slot = std::move(c);
  }
  return &slot->info;
}

const template_info* sequence_templates::find(const std::string& name) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : &it->second->info;
}

bool sequence_templates::is_composite(const template_info* t) const { return t && t->op_class == "sequence" && find(t->name) == t; }

expected<std::string> sequence_templates::render(const template_info& t, const spec::operator_spec& op,
                                                 const param_set& params) const {
  std::vector<const template_info*> parts;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = by_name_.find(t.name);
    if (it == by_name_.end() || &it->second->info != &t)
      return make_error(errc::internal, "template " + t.name + " is no composite of this synthesizer");
    parts = it->second->parts;
  }
  if (parts.size() != op.parts.size())
    return make_error(errc::invalid_input, "template " + t.name + " has " + std::to_string(parts.size()) +
                                               " parts; operator " + op.name + " has " + std::to_string(op.parts.size()));
  const param_set p = t.space.normalize(params);
  std::vector<std::string> codes;
  for (size_t i = 0; i < parts.size(); ++i) {
    param_set own = param_set::object();
    for (const auto& d : parts[i]->space.defs()) own[d.name] = p.at(part_param(i, d.name));
    auto code = synth::render(*parts[i], spec::part_operator(op, i), own);
    if (!code)
      return make_error(code.error().code, "part " + std::to_string(i) + " of operator " + op.name + ": " +
                                               code.error().message);
    codes.push_back(std::move(*code));
  }
  auto body = compose_sequence(op, t.backend, codes);
  if (!body) return body;
  return format_header(t.name, p) + "\n" + *body;
}

}  // namespace kevolve::synth
