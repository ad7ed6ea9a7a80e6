// How a child's parameters derive from its context, per memory mode:
// inherit (rule-guided 1-2 changes, back off after a failure), compare
// siblings (away from worse siblings' values, from the best one), merge
// (crossover of two parents). Pure functions of their inputs and the rng.
#pragma once

#include <string>
#include <vector>

#include "common/rng.h"
#include "synth/param_space.h"
#include "synth/rules.h"

namespace kevolve::synth {

struct step_result {
  param_set params;
  std::string summary;  // one line: what changed and why
};

// `parent` failed or succeeded as `item` says; `earlier_ok` holds parameter
// sets of earlier correct candidates of the same template, nearest first
// (the ones to back off to).
step_result inherit_step(const param_space& space, const param_set& parent, const context_item& item,
                         const std::vector<param_set>& earlier_ok, const rule_set& rules, rng& r);

// `best` is the fittest of parent and siblings; `worse` the others' parameters.
step_result sibling_step(const param_space& space, const param_set& best, const std::vector<param_set>& worse, rng& r);

// Uniform crossover; the child differs from both parents where they differ.
step_result crossover(const param_space& space, const param_set& a, const param_set& b, rng& r);

// A compact "k=v k=v" rendering of the keys that changed from `from` to `to`.
std::string describe_change(const param_set& from, const param_set& to);

}  // namespace kevolve::synth
