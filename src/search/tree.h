// The search tree of one task. Node 0 is the task itself (no kernel); its
// children are candidates sampled afresh. Every other node is one candidate
// kernel with its origin, the context its synthesizer saw, and its verdict.
// Failed nodes stay, with their reasons: they steer later repairs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "eval/status.h"

namespace kevolve::search {

using node_id = int64_t;
constexpr node_id kNoNode = -1;
constexpr node_id kRoot = 0;

// What the synthesizer of a child is shown (ARCHITECTURE.md "Search").
enum class memory_mode {
  inherit,           // the parent's trajectory from the root
  compare_siblings,  // the parent and its evaluated children
  merge,             // the parent and the best other candidates, to combine
  reset,             // nothing: sample afresh
};
const char* to_string(memory_mode m);
bool parse_memory_mode(const std::string& s, memory_mode& out);

enum class node_state { pending, evaluated };

struct node {
  node_id id = kNoNode;
  node_id parent = kNoNode;
  int depth = 0;
  memory_mode mode = memory_mode::reset;
  std::vector<node_id> context;  // nodes the synthesizer saw, in order
  std::string origin;            // which synthesizer wrote it
  std::string code;              // the candidate's source (set by the caller)
  node_state state = node_state::pending;
  eval::status result = eval::status::skipped;
  double fitness = 0.0;
  std::string reason;
  double created_s = 0.0;   // seconds since the search started
  double finished_s = 0.0;
  int32_t rank = -1;        // the MPI rank that evaluated it (0 in one process)
  std::vector<node_id> children;
  // Statistics of the selection policies.
  int64_t visits = 0;
  double value_sum = 0.0;

  bool ok() const { return state == node_state::evaluated && result == eval::status::ok; }
};

class tree {
 public:
  tree();
  node_id add_child(node_id parent, memory_mode mode, std::vector<node_id> context, double now);
  // Rebuilds a tree from stored nodes (ids 0..n-1 in order, node 0 the root).
  static tree from_nodes(std::vector<node> nodes);
  node& at(node_id id) { return nodes_.at(size_t(id)); }
  const node& at(node_id id) const { return nodes_.at(size_t(id)); }
  size_t size() const { return nodes_.size(); }
  const std::vector<node>& nodes() const { return nodes_; }

  // Root .. id, inclusive (the root excluded when `with_root` is false).
  std::vector<node_id> path(node_id id, bool with_root = false) const;
  // The evaluated, correct node of highest fitness, or kNoNode.
  node_id best() const;

 private:
  std::vector<node> nodes_;
};

}  // namespace kevolve::search
