// Evolutionary tournament: draw `tournament_size` evaluated candidates at
// random and grow from the fittest (failed ones count with fitness 0, so they
// are repaired now and then); sometimes sample afresh.
#pragma once

#include "search/policy.h"

namespace kevolve::search {

class tournament_policy : public selection_policy {
 public:
  explicit tournament_policy(const policy_config& c) : c_(c) {}
  const char* name() const override { return "tournament"; }
  node_id select(const tree& t, rng& r) const override;

 private:
  policy_config c_;
};

}  // namespace kevolve::search
