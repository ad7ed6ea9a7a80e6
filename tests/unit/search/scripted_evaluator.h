// A fake evaluator for search tests (as Kernel Tuner's simulation runner):
// recorded verdicts are replayed in order, or a rule derives a verdict from
// the tree, so that search behaviour is tested without compiling anything.
#pragma once

#include <deque>
#include <functional>
#include <vector>

#include "search/engine.h"

namespace kevolve::search::testing {

struct scripted_verdict {
  eval::status result = eval::status::ok;
  double fitness = 1.0;
  std::string reason;
};

class scripted_evaluator {
 public:
  explicit scripted_evaluator(std::vector<scripted_verdict> script) : script_(script.begin(), script.end()) {}
  // Verdicts computed from the tree (for tests that need many evaluations).
  explicit scripted_evaluator(std::function<scripted_verdict(const tree&, const expansion&)> rule) : rule_(std::move(rule)) {}

  scripted_verdict judge(const tree& t, const expansion& e) {
    if (rule_) return rule_(t, e);
    scripted_verdict v = script_.empty() ? scripted_verdict{eval::status::wrong_result, 0.0, "script exhausted"} : script_.front();
    if (!script_.empty()) script_.pop_front();
    return v;
  }

 private:
  std::deque<scripted_verdict> script_;
  std::function<scripted_verdict(const tree&, const expansion&)> rule_;
};

// Runs the engine to the end: fills every free slot, then records the oldest
// pending expansion; one second of simulated time per verdict.
inline std::vector<expansion> run_search(search_engine& engine, scripted_evaluator& evaluator, int max_steps = 10000) {
  std::vector<expansion> handed_out;
  std::deque<expansion> pending;
  double now = 0.0;
  for (int step = 0; step < max_steps && !engine.finished(now); ++step) {
    while (auto e = engine.next(now)) {
      engine.set_code(e->child, "scripted", "// node " + std::to_string(e->child));
      handed_out.push_back(*e);
      pending.push_back(*e);
    }
    if (pending.empty()) break;
    const expansion e = pending.front();
    pending.pop_front();
    const scripted_verdict v = evaluator.judge(engine.nodes(), e);
    now += 1.0;
    engine.record(e.child, v.result, v.fitness, v.reason, now);
  }
  return handed_out;
}

}  // namespace kevolve::search::testing
