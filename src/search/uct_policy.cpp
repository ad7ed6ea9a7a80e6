#include "search/uct_policy.h"

#include <cmath>

namespace kevolve::search {

node_id uct_policy::select(const tree& t, rng&) const {
  node_id at = kRoot;
  for (;;) {
    const node& n = t.at(at);
    const double allowed = c_.widening * std::sqrt(double(std::max<int64_t>(n.visits, 1)));
    bool any_evaluated = false;
    for (node_id c : n.children) any_evaluated |= t.at(c).state == node_state::evaluated;
    if (!any_evaluated || double(n.children.size()) < allowed) return at;
    node_id best = kNoNode;
    double best_score = -1.0;
    const double log_n = std::log(double(std::max<int64_t>(n.visits, 1)));
    for (node_id c : n.children) {
      const node& child = t.at(c);
      if (child.state != node_state::evaluated || child.visits == 0) continue;
      const double q = child.value_sum / double(child.visits);
      const double score = q + c_.exploration * std::sqrt(log_n / double(child.visits));
      if (score > best_score) {  // ties keep the older child: deterministic
        best_score = score;
        best = c;
      }
    }
    if (best == kNoNode) return at;
    at = best;
  }
}

}  // namespace kevolve::search
