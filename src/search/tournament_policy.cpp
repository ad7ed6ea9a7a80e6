#include "search/tournament_policy.h"

#include <vector>

namespace kevolve::search {

node_id tournament_policy::select(const tree& t, rng& r) const {
  if (r.uniform() < c_.fresh_probability) return kRoot;
  std::vector<node_id> population;
  for (const node& n : t.nodes())
    if (n.id != kRoot && n.state == node_state::evaluated) population.push_back(n.id);
  if (population.empty()) return kRoot;
  node_id winner = kNoNode;
  for (int i = 0; i < std::max(1, c_.tournament_size); ++i) {
    const node_id c = population[r.below(population.size())];
    if (winner == kNoNode || t.at(c).fitness > t.at(winner).fitness ||
        (t.at(c).fitness == t.at(winner).fitness && c < winner))
      winner = c;
  }
  return winner;
}

}  // namespace kevolve::search
