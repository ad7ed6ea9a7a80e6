#include "synth/rules.h"

#include <algorithm>
#include <cctype>
#include <functional>
#include <map>

#include "common/fs.h"

namespace kevolve::synth {

namespace {

std::vector<std::string> strings(const nlohmann::json& j, const char* key) {
  std::vector<std::string> out;
  if (!j.contains(key)) return out;
  if (j[key].is_string()) out.push_back(j[key].get<std::string>());
  else if (j[key].is_array())
    for (const auto& v : j[key])
      if (v.is_string()) out.push_back(v.get<std::string>());
  return out;
}

std::string lower(std::string s) {
  for (char& c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

bool contains_any(const std::string& text, const std::vector<std::string>& needles) {
  const std::string t = lower(text);
  for (const auto& n : needles)
    if (t.find(lower(n)) != std::string::npos) return true;
  return false;
}

// `when.metrics`: {"<name>": {"below": n, "above": n}, ...}, at least one
// bound each. `key(path)` names a key in errors ("rules.json: 'rules[3].when.metrics.dram_pct'").
expected<std::vector<metric_bound>> metric_bounds(const nlohmann::json& w,
                                                  const std::function<std::string(const std::string&)>& key) {
  std::vector<metric_bound> out;
  if (!w.contains("metrics")) return out;
  const auto& m = w["metrics"];
  if (!m.is_object() || m.empty())
    return make_error(errc::invalid_input, key("") + " must be an object of metric bounds, e.g. "
                                                     "{\"dram_pct\": {\"below\": 60}}, got " + m.dump());
  for (const auto& [name, b] : m.items()) {
    if (!b.is_object() || b.empty())
      return make_error(errc::invalid_input,
                        key("." + name) + " must be {\"below\": n} and/or {\"above\": n}, got " + b.dump());
    metric_bound x;
    x.name = name;
    for (const auto& [bound, v] : b.items()) {
      if ((bound != "below" && bound != "above") || !v.is_number())
        return make_error(errc::invalid_input, key("." + name + "." + bound) +
                                                   " must be 'below' or 'above' with a number, got " + v.dump());
      (bound == "below" ? x.below : x.above) = v.get<double>();
    }
    out.push_back(std::move(x));
  }
  return out;
}

bool metrics_hold(const std::vector<metric_bound>& bounds, const std::map<std::string, double>& metrics) {
  for (const auto& b : bounds) {
    const auto it = metrics.find(b.name);
    if (it == metrics.end()) return false;
    if (b.below && !(it->second < *b.below)) return false;
    if (b.above && !(it->second > *b.above)) return false;
  }
  return true;
}

}  // namespace

expected<rule_set> rule_set::from_json(const nlohmann::json& j, const std::string& context) {
  if (!j.is_object() || !j.contains("rules") || !j["rules"].is_array())
    return make_error(errc::invalid_input, context + ": needs a 'rules' list");
  rule_set rs;
  for (size_t i = 0; i < j["rules"].size(); ++i) {
    const auto& r = j["rules"][i];
    const std::string where = context + ": 'rules[" + std::to_string(i) + "]'";
    if (!r.is_object() || !r.contains("when") || !r.contains("do") || !r["do"].is_array())
      return make_error(errc::invalid_input, where + " needs 'when' and a 'do' list");
    rule out;
    out.name = r.value("name", "rule" + std::to_string(i));
    out.doc = r.value("doc", std::string());
    out.max_actions = r.value("max_actions", 2);
    const auto& w = r["when"];
    out.when.status = strings(w, "status");
    out.when.bottleneck = strings(w, "bottleneck");
    out.when.roofline_below = w.value("roofline_below", -1.0);
    out.when.roofline_above = w.value("roofline_above", -1.0);
    out.when.diagnostics = strings(w, "diagnostics");
    out.when.reason = strings(w, "reason");
    auto bounds = metric_bounds(w, [&](const std::string& path) {
      return context + ": 'rules[" + std::to_string(i) + "].when.metrics" + path + "'";
    });
    if (!bounds) return tl::unexpected(bounds.error());
    out.when.metrics = std::move(*bounds);
    for (const auto& a : r["do"]) {
      rule_action act;
      act.action = a.value("action", std::string());
      act.param = a.value("param", std::string());
      act.value = a.value("value", nlohmann::json());
      static const std::vector<std::string> known = {"increase", "decrease", "switch", "set", "back_off", "sample"};
      if (std::find(known.begin(), known.end(), act.action) == known.end())
        return make_error(errc::invalid_input, where + " unknown action '" + act.action + "'");
      out.actions.push_back(std::move(act));
    }
    rs.rules_.push_back(std::move(out));
  }
  return rs;
}

expected<rule_set> rule_set::load(const std::filesystem::path& file) {
  auto text = read_file(file);
  if (!text) return tl::unexpected(text.error());
  nlohmann::json j = nlohmann::json::parse(*text, nullptr, false);
  if (j.is_discarded()) return make_error(errc::invalid_input, file.string() + ": not valid JSON");
  return from_json(j, file.string());
}

bool rule_set::matches(const rule& r, const context_item& p) const {
  const auto& w = r.when;
  if (!w.status.empty() &&
      std::find(w.status.begin(), w.status.end(), eval::to_string(p.result)) == w.status.end())
    return false;
  if (!w.bottleneck.empty() && std::find(w.bottleneck.begin(), w.bottleneck.end(), p.bottleneck) == w.bottleneck.end())
    return false;
  if (w.roofline_below >= 0 && !(p.roofline_fraction < w.roofline_below)) return false;
  if (w.roofline_above >= 0 && !(p.roofline_fraction > w.roofline_above)) return false;
  if (!w.diagnostics.empty() && !contains_any(p.compile_diagnostics, w.diagnostics)) return false;
  if (!w.reason.empty() && !contains_any(p.reason, w.reason)) return false;
  return metrics_hold(w.metrics, p.metrics);
}

bool applicable(const rule_action& a, const param_space& space, const param_set& p) {
  if (a.action == "back_off" || a.action == "sample") return true;
  const param_def* d = space.find(a.param);
  if (!d) return false;
  const int i = d->index_of(p.value(a.param, d->default_value));
  if (a.action == "increase") return i + 1 < int(d->values.size());
  if (a.action == "decrease") return i > 0;
  if (a.action == "switch") return d->values.size() > 1;
  if (a.action == "set") return d->index_of(a.value) >= 0 && d->values[size_t(std::max(i, 0))] != a.value;
  return false;
}

const rule* rule_set::decide(const context_item& parent, const param_space& space, const param_set& params,
                             std::vector<rule_action>& actions) const {
  for (const auto& r : rules_) {
    if (!matches(r, parent)) continue;
    actions.clear();
    for (const auto& a : r.actions)
      if (applicable(a, space, params) && int(actions.size()) < r.max_actions) actions.push_back(a);
    if (!actions.empty()) return &r;
  }
  actions.clear();
  return nullptr;
}

}  // namespace kevolve::synth
