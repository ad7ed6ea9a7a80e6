// The search engine of one task: a plain, deterministic class. It chooses
// which node grows next and what its synthesizer sees; the caller writes the
// child (a synthesizer), evaluates it (an evaluator) and records the verdict.
//
// The same seed and the same verdicts give the same tree, whatever order the
// verdicts arrive in and however late the caller asks for the next child:
// verdicts are applied in the order their children were handed out, and the
// k-th child is chosen from exactly the first k - max_in_flight verdicts (a
// verdict that arrives early, or before the child that must not see it has
// been handed out, is held until then). With max_in_flight 1 every child
// sees every verdict before it.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/error.h"
#include "common/rng.h"
#include "search/memory.h"
#include "search/policy.h"
#include "search/stop_rules.h"
#include "search/tree.h"

namespace kevolve::search {

struct search_config {
  policy_config policy;
  memory_config memory;
  stop_config stop;
  int max_in_flight = 2;  // expansions handed out and not yet recorded
  uint64_t seed = 1;
};

// One child to write and evaluate.
struct expansion {
  node_id child = kNoNode;
  node_id parent = kRoot;
  memory_mode mode = memory_mode::reset;
  std::vector<node_id> context;  // what the synthesizer is shown
};

class search_engine {
 public:
  // Errors name the config key that is wrong.
  static expected<search_engine> create(const search_config& config);

  // Everything that determines the engine's future choices, for checkpoints.
  struct snapshot {
    tree nodes;
    rng::state_type random{};
    int64_t evaluations = 0;
    int64_t since_improvement = 0;
    double best_fitness = 0.0;
  };
  snapshot save() const;
  // An engine that continues exactly where `s` was taken. Nodes that were
  // pending stay pending: the caller re-issues them (pending_nodes()).
  static expected<search_engine> restore(const search_config& config, snapshot s);
  std::vector<node_id> pending_nodes() const;

  // The next expansion, or nothing when the search has stopped or
  // `max_in_flight` expansions are pending. `now`: seconds since the start.
  std::optional<expansion> next(double now);

  // The synthesizer's output for a pending child.
  void set_code(node_id child, std::string origin, std::string code);
  // The evaluator's verdict for a pending child, applied now or held (see
  // above); a stopped search applies every verdict it holds.
  // `rank`: who evaluated it (kept with the node).
  void record(node_id child, eval::status result, double fitness, const std::string& reason, double now, int rank = -1);

  // A verdict once applied to the tree, in the order applied.
  struct applied {
    node_id child = kNoNode;
    bool improved = false;  // a correct child above the best before it
  };
  // Verdicts applied since the last call.
  std::vector<applied> take_applied() { return std::exchange(applied_, {}); }
  int held() const { return int(held_.size()); }

  // "" while the search goes on, else why it stopped.
  std::string stopped(double now) const;
  // Stopped, and nothing is in flight (or held) any more.
  bool finished(double now) const { return !stopped(now).empty() && in_flight_ == 0; }

  int in_flight() const { return in_flight_; }
  const tree& nodes() const { return tree_; }
  node_id best() const { return tree_.best(); }
  search_progress progress(double now) const;
  const search_config& config() const { return config_; }
  const rng& random() const { return rng_; }

 private:
  explicit search_engine(const search_config& c);
  struct verdict {
    node_id child = kNoNode;
    eval::status result = eval::status::ok;
    double fitness = 0.0;
    std::string reason;
    double now = 0.0;
    int rank = -1;
  };
  void apply(const verdict& v);
  // Applies held verdicts in order while the next child may see them.
  void apply_ready(double now);
  bool can_grow(double now) const;

  search_config config_;
  std::shared_ptr<const selection_policy> policy_;
  rng rng_;
  tree tree_;
  int in_flight_ = 0;  // handed out and not applied (held verdicts included)
  std::vector<verdict> held_;     // arrived, not yet applied
  std::vector<applied> applied_;  // for take_applied()
  int64_t evaluations_ = 0;
  int64_t since_improvement_ = 0;
  double best_fitness_ = 0.0;
};

}  // namespace kevolve::search
