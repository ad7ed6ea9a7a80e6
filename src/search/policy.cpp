#include "search/policy.h"

#include "search/greedy_policy.h"
#include "search/tournament_policy.h"
#include "search/uct_policy.h"

namespace kevolve::search {

double reward(const node& n) { return n.ok() ? n.fitness / (1.0 + n.fitness) : 0.0; }

std::unique_ptr<selection_policy> make_policy(const policy_config& c) {
  if (c.name == "uct") return std::make_unique<uct_policy>(c);
  if (c.name == "greedy") return std::make_unique<greedy_policy>(c);
  if (c.name == "tournament") return std::make_unique<tournament_policy>(c);
  return nullptr;
}

}  // namespace kevolve::search
