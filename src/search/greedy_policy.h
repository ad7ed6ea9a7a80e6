// Greedy: grow from the best correct candidate so far; now and then (and
// while nothing is correct yet) sample afresh.
#pragma once

#include "search/policy.h"

namespace kevolve::search {

class greedy_policy : public selection_policy {
 public:
  explicit greedy_policy(const policy_config& c) : c_(c) {}
  const char* name() const override { return "greedy"; }
  node_id select(const tree& t, rng& r) const override;

 private:
  policy_config c_;
};

}  // namespace kevolve::search
