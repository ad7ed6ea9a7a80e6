#include "search/greedy_policy.h"

namespace kevolve::search {

node_id greedy_policy::select(const tree& t, rng& r) const {
  if (r.uniform() < c_.fresh_probability) return kRoot;
  const node_id best = t.best();
  return best == kNoNode ? kRoot : best;
}

}  // namespace kevolve::search
