#include "synth/mutation.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>

namespace kevolve::synth {

namespace {

std::string text(const nlohmann::json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

// Applies one rule action; returns whether the set changed.
bool apply_action(const param_space& space, const rule_action& a, param_set& p, rng& r) {
  if (a.action == "increase") return space.step(p, a.param, +1);
  if (a.action == "decrease") return space.step(p, a.param, -1);
  if (a.action == "switch") return space.switch_value(p, a.param, r);
  if (a.action == "set") {
    if (p.value(a.param, nlohmann::json()) == a.value) return false;
    p[a.param] = a.value;
    return true;
  }
  if (a.action == "sample") {
    p = space.sample(r);
    return true;
  }
  return false;
}

}  // namespace

std::string describe_change(const param_set& from, const param_set& to) {
  std::string s;
  for (const auto& k : changed_keys(from, to))
    if (to.contains(k)) s += (s.empty() ? "" : " ") + k + "=" + text(to[k]);
  return s.empty() ? "no change" : s;
}

step_result inherit_step(const param_space& space, const param_set& parent_in, const context_item& item,
                         const std::vector<param_set>& earlier_ok, const rule_set& rules, rng& r) {
  const param_set parent = space.normalize(parent_in);
  std::vector<rule_action> actions;
  const rule* fired = rules.decide(item, space, parent, actions);
  step_result out{parent, ""};
  std::string why;
  if (fired) {
    why = "rule " + fired->name;
    bool back_off = false;
    for (const auto& a : actions) back_off = back_off || a.action == "back_off";
    if (back_off) {
      // Revert to the last correct parameters; try a change elsewhere than
      // where the failing candidate differed from them.
      const param_set base = earlier_ok.empty() ? space.defaults() : space.normalize(earlier_ok.front());
      std::vector<std::string> failed = changed_keys(base, parent);
      out.params = base;
      if (out.params == parent || r.uniform() < 0.5) space.mutate_one(out.params, r, failed);
      if (out.params == parent) space.mutate_one(out.params, r);
      out.summary = why + ": back off " + describe_change(parent, base) + "; now " + describe_change(parent, out.params);
      return out;
    }
    for (const auto& a : actions) apply_action(space, a, out.params, r);
  }
  if (out.params == parent) {
    why = fired ? why + " (no effect), random" : "random";
    const std::string first = space.mutate_one(out.params, r);
    if (r.uniform() < 0.35) space.mutate_one(out.params, r, {first});
  }
  out.summary = why + ": " + describe_change(parent, out.params);
  return out;
}

step_result sibling_step(const param_space& space, const param_set& best_in, const std::vector<param_set>& worse_in,
                         rng& r) {
  const param_set best = space.normalize(best_in);
  // Values worse siblings tried, per parameter: avoid them.
  std::map<std::string, std::set<std::string>> tabu;
  std::vector<std::string> differing;
  for (const auto& w_in : worse_in) {
    const param_set w = space.normalize(w_in);
    for (const auto& k : changed_keys(best, w)) {
      tabu[k].insert(w[k].dump());
      if (std::find(differing.begin(), differing.end(), k) == differing.end()) differing.push_back(k);
    }
  }
  // Prefer parameters the siblings did not explore; fall back to any.
  std::vector<const param_def*> order;
  for (const auto& d : space.defs())
    if (d.values.size() > 1 && std::find(differing.begin(), differing.end(), d.name) == differing.end())
      order.push_back(&d);
  for (const auto& d : space.defs())
    if (d.values.size() > 1 && std::find(differing.begin(), differing.end(), d.name) != differing.end())
      order.push_back(&d);
  size_t unexplored = 0;
  for (const param_def* d : order)
    if (std::find(differing.begin(), differing.end(), d->name) == differing.end()) ++unexplored;
  if (unexplored > 1) std::rotate(order.begin(), order.begin() + long(r.below(unexplored)), order.begin() + long(unexplored));
  for (const param_def* d : order) {
    std::vector<nlohmann::json> options;
    for (const auto& v : d->values)
      if (v != best[d->name] && !tabu[d->name].count(v.dump())) options.push_back(v);
    if (options.empty()) continue;
    // Numbers: the nearest untried neighbour of the best value.
    param_set p = best;
    if (d->values.front().is_number_integer()) {
      const int bi = d->index_of(best[d->name]);
      std::stable_sort(options.begin(), options.end(), [&](const nlohmann::json& x, const nlohmann::json& y) {
        return std::abs(d->index_of(x) - bi) < std::abs(d->index_of(y) - bi);
      });
      p[d->name] = options.front();
    } else {
      p[d->name] = options[r.below(options.size())];
    }
    return {p, "siblings: from the best, " + describe_change(best, p)};
  }
  param_set p = best;
  space.mutate_one(p, r);
  return {p, "siblings: all neighbours tried, random " + describe_change(best, p)};
}

step_result crossover(const param_space& space, const param_set& a_in, const param_set& b_in, rng& r) {
  const param_set a = space.normalize(a_in), b = space.normalize(b_in);
  param_set c = a;
  const std::vector<std::string> diff = changed_keys(a, b);
  for (const auto& k : diff)
    if (r.below(2)) c[k] = b[k];
  if (diff.size() >= 2) {
    // A real mix: at least one value from each parent.
    if (c == a) {
      const std::string& k = diff[r.below(diff.size())];
      c[k] = b[k];
    }
    if (c == a) c[diff.front()] = b[diff.front()];
    if (c == b) c[diff.back()] = a[diff.back()];
  } else if (c == a || c == b) {
    space.mutate_one(c, r);
  }
  return {c, "merge: " + describe_change(a, c)};
}

}  // namespace kevolve::synth
