#include "search/stop_rules.h"

namespace kevolve::search {
namespace {
// 30 -> "30", 1.5 -> "1.5"
std::string number(double v) {
  std::string s = std::to_string(v);
  s.erase(s.find_last_not_of('0') + 1);
  if (!s.empty() && s.back() == '.') s.pop_back();
  return s;
}
}  // namespace

std::string stop_reason(const stop_config& c, const search_progress& p) {
  if (c.target_fitness > 0 && p.best_fitness >= c.target_fitness)
    return "target fitness " + number(c.target_fitness) + " reached";
  if (c.max_evaluations > 0 && p.evaluations >= c.max_evaluations)
    return "evaluation budget of " + std::to_string(c.max_evaluations) + " spent";
  if (c.max_seconds > 0 && p.elapsed_seconds >= c.max_seconds)
    return "time budget of " + number(c.max_seconds) + " s of evaluation spent";
  if (c.stagnation > 0 && p.since_improvement >= c.stagnation)
    return "no improvement in " + std::to_string(c.stagnation) + " evaluations";
  return {};
}

}  // namespace kevolve::search
