// Selection policies: which node the next child grows from. kRoot means
// "sample afresh". Policies only choose; they never run anything (KTT style).
#pragma once

#include <memory>
#include <string>

#include "common/rng.h"
#include "search/tree.h"

namespace kevolve::search {

struct policy_config {
  std::string name = "uct";      // uct | greedy | tournament
  double exploration = 0.7;      // uct: the c of Q + c*sqrt(ln N / n), rewards in [0, 1)
  double widening = 0.5;         // uct: a node may have widening*sqrt(visits) children
  double fresh_probability = 0.1;  // greedy, tournament: sample afresh this often
  int tournament_size = 4;       // tournament: contestants per selection
};

class selection_policy {
 public:
  virtual ~selection_policy() = default;
  virtual const char* name() const = 0;
  virtual node_id select(const tree& t, rng& r) const = 0;
};

// Fails only for an unknown name (the config loader reports it).
std::unique_ptr<selection_policy> make_policy(const policy_config& c);

// The reward a policy learns from: a verdict's fitness squashed into [0, 1).
double reward(const node& n);

}  // namespace kevolve::search
