// Diagnostic rules kept as data (knowledge/templates/rules.json): conditions
// on a parent's verdict and diagnostics, actions on its template parameters.
// Rules are tried in file order; the first rule that matches and has an
// action applicable to the template's parameter space decides.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "common/error.h"
#include "synth/param_space.h"
#include "synth/synthesizer.h"

namespace kevolve::synth {

// A bound on one hardware counter of the parent's worst profiled timed shape
// (context_item::metrics). A parent without the metric never matches.
struct metric_bound {
  std::string name;  // dram_pct, occupancy_pct, stall_long_scoreboard, ...
  std::optional<double> below, above;  // metric < below, metric > above (each when given)
};

struct rule_condition {
  std::vector<std::string> status;       // any of these verdict statuses
  std::vector<std::string> bottleneck;   // any of these bottleneck classes
  double roofline_below = -1.0;          // worst-shape roofline fraction < this (when >= 0)
  double roofline_above = -1.0;          // ... > this (when >= 0)
  std::vector<std::string> diagnostics;  // any substring of compile diagnostics (case-insensitive)
  std::vector<std::string> reason;       // any substring of the failure reason (case-insensitive)
  std::vector<metric_bound> metrics;     // all must hold
};

struct rule_action {
  std::string action;  // increase, decrease, switch, set, back_off, sample
  std::string param;   // empty for back_off / sample
  nlohmann::json value;  // for set
};

struct rule {
  std::string name;
  std::string doc;
  rule_condition when;
  std::vector<rule_action> actions;
  int max_actions = 2;  // at most this many applicable actions are applied
};

class rule_set {
 public:
  static expected<rule_set> load(const std::filesystem::path& file);
  static expected<rule_set> from_json(const nlohmann::json& j, const std::string& context);

  const std::vector<rule>& rules() const { return rules_; }
  bool matches(const rule& r, const context_item& parent) const;
  // The first matching rule with an applicable action, and those actions.
  const rule* decide(const context_item& parent, const param_space& space, const param_set& params,
                     std::vector<rule_action>& actions) const;

 private:
  std::vector<rule> rules_;
};

// Whether the action can change a parameter set of this space.
bool applicable(const rule_action& a, const param_space& space, const param_set& p);

}  // namespace kevolve::synth
