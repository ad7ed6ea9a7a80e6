#include "synth/param_space.h"

#include <algorithm>

namespace kevolve::synth {

int param_def::index_of(const nlohmann::json& v) const {
  for (size_t i = 0; i < values.size(); ++i)
    if (values[i] == v) return int(i);
  return -1;
}

expected<param_space> param_space::from_json(const nlohmann::json& j, const std::string& context) {
  if (!j.is_object()) return make_error(errc::invalid_input, context + ": 'params' must be an object");
  std::vector<param_def> defs;
  for (auto it = j.begin(); it != j.end(); ++it) {
    const std::string where = context + ": 'params." + it.key() + "'";
    const auto& d = it.value();
    if (!d.is_object() || !d.contains("values") || !d["values"].is_array() || d["values"].empty())
      return make_error(errc::invalid_input, where + " needs a non-empty 'values' list");
    param_def p;
    p.name = it.key();
    for (const auto& v : d["values"]) {
      if (!v.is_number_integer() && !v.is_string())
        return make_error(errc::invalid_input, where + " values must be integers or strings");
      p.values.push_back(v);
    }
    p.default_value = d.value("default", p.values.front());
    if (p.index_of(p.default_value) < 0)
      return make_error(errc::invalid_input, where + " default " + p.default_value.dump() + " is not a value");
    p.doc = d.value("doc", std::string());
    defs.push_back(std::move(p));
  }
  return param_space(std::move(defs));
}

const param_def* param_space::find(const std::string& name) const {
  for (const auto& d : defs_)
    if (d.name == name) return &d;
  return nullptr;
}

param_set param_space::defaults() const {
  param_set p = param_set::object();
  for (const auto& d : defs_) p[d.name] = d.default_value;
  return p;
}

param_set param_space::sample(rng& r) const {
  param_set p = param_set::object();
  for (const auto& d : defs_) p[d.name] = d.values[r.below(d.values.size())];
  return p;
}

param_set param_space::normalize(const param_set& in) const {
  param_set p = param_set::object();
  for (const auto& d : defs_) {
    if (in.is_object() && in.contains(d.name) && d.index_of(in[d.name]) >= 0) p[d.name] = in[d.name];
    else p[d.name] = d.default_value;
  }
  return p;
}

bool param_space::contains(const param_set& p) const {
  if (!p.is_object() || p.size() != defs_.size()) return false;
  for (const auto& d : defs_)
    if (!p.contains(d.name) || d.index_of(p[d.name]) < 0) return false;
  return true;
}

bool param_space::step(param_set& p, const std::string& name, int direction) const {
  const param_def* d = find(name);
  if (!d) return false;
  const int i = std::max(0, d->index_of(p.value(name, d->default_value)));
  const int j = i + (direction > 0 ? 1 : -1);
  if (j < 0 || j >= int(d->values.size())) return false;
  p[name] = d->values[size_t(j)];
  return true;
}

bool param_space::switch_value(param_set& p, const std::string& name, rng& r) const {
  const param_def* d = find(name);
  if (!d || d->values.size() < 2) return false;
  const int i = d->index_of(p.value(name, d->default_value));
  size_t j = r.below(d->values.size() - 1);
  if (int(j) >= i && i >= 0) ++j;
  p[name] = d->values[j];
  return true;
}

std::string param_space::mutate_one(param_set& p, rng& r, const std::vector<std::string>& avoid) const {
  std::vector<const param_def*> open;
  for (const auto& d : defs_)
    if (d.values.size() > 1 && std::find(avoid.begin(), avoid.end(), d.name) == avoid.end()) open.push_back(&d);
  if (open.empty())
    for (const auto& d : defs_)
      if (d.values.size() > 1) open.push_back(&d);
  if (open.empty()) return {};
  const param_def* d = open[r.below(open.size())];
  // Numeric parameters mostly move one step (local search); strings switch.
  if (d->values.front().is_number_integer() && r.uniform() < 0.75) {
    const int dir = r.below(2) ? 1 : -1;
    if (step(p, d->name, dir) || step(p, d->name, -dir)) return d->name;
  }
  switch_value(p, d->name, r);
  return d->name;
}

std::vector<std::string> changed_keys(const param_set& a, const param_set& b) {
  std::vector<std::string> out;
  for (auto it = a.begin(); it != a.end(); ++it)
    if (!b.contains(it.key()) || b[it.key()] != it.value()) out.push_back(it.key());
  for (auto it = b.begin(); it != b.end(); ++it)
    if (!a.contains(it.key())) out.push_back(it.key());
  return out;
}

}  // namespace kevolve::synth
