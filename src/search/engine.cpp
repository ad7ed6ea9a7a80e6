#include "search/engine.h"

#include <algorithm>
#include <cassert>

namespace kevolve::search {

expected<search_engine> search_engine::create(const search_config& c) {
  if (!make_policy(c.policy))
    return make_error(errc::invalid_input, "'search.policy' must be uct, greedy or tournament, got \"" + c.policy.name + "\"");
  if (!valid_memory_mode_name(c.memory.mode))
    return make_error(errc::invalid_input, "'search.memory' must be adaptive, inherit, compare_siblings, merge or reset, got \"" +
                                               c.memory.mode + "\"");
  if (c.max_in_flight < 1) return make_error(errc::invalid_input, "'search.max_in_flight' must be at least 1");
  if (c.stop.max_evaluations <= 0 && c.stop.max_seconds <= 0 && c.stop.stagnation <= 0 && c.stop.target_fitness <= 0)
    return make_error(errc::invalid_input, "'search.stop' needs at least one rule (target_fitness, max_evaluations, max_seconds or stagnation)");
  return search_engine(c);
}

search_engine::search_engine(const search_config& c)
    : config_(c), policy_(make_policy(c.policy)), rng_(c.seed) {}

search_engine::snapshot search_engine::save() const {
  // Held verdicts are part of what a checkpoint keeps: the snapshot is the
  // engine with them applied (a resumed search continues from everything
  // known, and nothing is evaluated twice).
  search_engine e = *this;
  std::vector<verdict> held = e.held_;
  std::sort(held.begin(), held.end(), [](const verdict& a, const verdict& b) { return a.child < b.child; });
  for (const verdict& v : held) e.apply(v);
  snapshot s;
  s.nodes = std::move(e.tree_);
  s.random = rng_.state();
  s.evaluations = e.evaluations_;
  s.since_improvement = e.since_improvement_;
  s.best_fitness = e.best_fitness_;
  return s;
}

expected<search_engine> search_engine::restore(const search_config& config, snapshot s) {
  auto e = create(config);
  if (!e) return e;
  for (size_t i = 0; i < s.nodes.size(); ++i) {
    const node& n = s.nodes.at(node_id(i));
    if (n.id != node_id(i) || (i > 0 && (n.parent < 0 || n.parent >= node_id(i))))
      return make_error(errc::invalid_input, "search state: node " + std::to_string(i) + " is out of order or has a bad parent");
  }
  e->tree_ = std::move(s.nodes);
  e->rng_.set_state(s.random);
  e->evaluations_ = s.evaluations;
  e->since_improvement_ = s.since_improvement;
  e->best_fitness_ = s.best_fitness;
  e->in_flight_ = int(e->pending_nodes().size());
  return e;
}

std::vector<node_id> search_engine::pending_nodes() const {
  std::vector<node_id> p;
  for (const node& n : tree_.nodes())
    if (n.id != kRoot && n.state == node_state::pending) p.push_back(n.id);
  return p;
}

search_progress search_engine::progress(double now) const {
  search_progress p;
  p.evaluations = evaluations_;
  p.since_improvement = since_improvement_;
  p.best_fitness = best_fitness_;
  p.elapsed_seconds = now;
  return p;
}

std::string search_engine::stopped(double now) const { return stop_reason(config_.stop, progress(now)); }

bool search_engine::can_grow(double now) const {
  // Pending evaluations count against the budget: never hand out more.
  return stopped(now).empty() &&
         !(config_.stop.max_evaluations > 0 && evaluations_ + in_flight_ >= config_.stop.max_evaluations);
}

std::optional<expansion> search_engine::next(double now) {
  if (!can_grow(now)) {
    apply_ready(now);  // nothing more is handed out: every held verdict is applied
    return std::nullopt;
  }
  if (in_flight_ >= config_.max_in_flight) return std::nullopt;
  const node_id selected = policy_->select(tree_, rng_);
  memory_choice m = choose_memory(config_.memory, tree_, selected, rng_);
  expansion e;
  e.parent = m.parent;
  e.mode = m.mode;
  e.context = m.context;
  e.child = tree_.add_child(m.parent, m.mode, std::move(m.context), now);
  ++in_flight_;
  apply_ready(now);  // the verdict this child was not to see, if it is in
  return e;
}

void search_engine::set_code(node_id child, std::string origin, std::string code) {
  node& n = tree_.at(child);
  n.origin = std::move(origin);
  n.code = std::move(code);
}

void search_engine::record(node_id child, eval::status result, double fitness, const std::string& reason, double now,
                           int rank) {
  assert(tree_.at(child).state == node_state::pending && "a verdict is recorded once per node");
  assert(std::none_of(held_.begin(), held_.end(), [&](const verdict& v) { return v.child == child; }) &&
         "a verdict is recorded once per node");
  held_.push_back({child, result, fitness, reason, now, rank});
  apply_ready(now);
}

void search_engine::apply_ready(double now) {
  for (;;) {
    // The earliest child handed out and not yet applied: its verdict is next.
    node_id first = kNoNode;
    for (const node& n : tree_.nodes())
      if (n.id != kRoot && n.state == node_state::pending) {
        first = n.id;
        break;
      }
    const auto v = std::find_if(held_.begin(), held_.end(), [&](const verdict& h) { return h.child == first; });
    if (first == kNoNode || v == held_.end()) return;
    // While children are still handed out, child k sees exactly the first
    // k - max_in_flight verdicts: apply one only if the next child may see it.
    if (in_flight_ <= config_.max_in_flight - 1 && can_grow(now)) return;
    const verdict x = *v;
    held_.erase(v);
    apply(x);
  }
}

void search_engine::apply(const verdict& v) {
  node& n = tree_.at(v.child);
  n.state = node_state::evaluated;
  n.rank = v.rank;
  n.result = v.result;
  n.fitness = v.result == eval::status::ok ? v.fitness : 0.0;
  n.reason = v.reason;
  n.finished_s = v.now;
  --in_flight_;
  ++evaluations_;
  const bool improved = n.ok() && n.fitness > best_fitness_;
  if (improved) {
    best_fitness_ = n.fitness;
    since_improvement_ = 0;
  } else {
    ++since_improvement_;
  }
  const double r = reward(n);
  for (node_id id : tree_.path(v.child, true)) {
    node& p = tree_.at(id);
    ++p.visits;
    p.value_sum += r;
  }
  applied_.push_back({v.child, improved});
}

}  // namespace kevolve::search
