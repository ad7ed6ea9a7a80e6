// UCT / MCTS with progressive widening: descend from the root by
// Q + c*sqrt(ln N / n) until a node may still grow a child (fewer than
// widening*sqrt(visits) children) or has no evaluated child; expand it.
#pragma once

#include "search/policy.h"

namespace kevolve::search {

class uct_policy : public selection_policy {
 public:
  explicit uct_policy(const policy_config& c) : c_(c) {}
  const char* name() const override { return "uct"; }
  node_id select(const tree& t, rng& r) const override;

 private:
  policy_config c_;
};

}  // namespace kevolve::search
