#include "search/tree.h"

#include <algorithm>

namespace kevolve::search {

const char* to_string(memory_mode m) {
  switch (m) {
    case memory_mode::inherit: return "inherit";
    case memory_mode::compare_siblings: return "compare_siblings";
    case memory_mode::merge: return "merge";
    case memory_mode::reset: return "reset";
  }
  return "?";
}

bool parse_memory_mode(const std::string& s, memory_mode& out) {
  for (memory_mode m : {memory_mode::inherit, memory_mode::compare_siblings, memory_mode::merge, memory_mode::reset})
    if (s == to_string(m)) {
      out = m;
      return true;
    }
  return false;
}

tree::tree() {
  node root;
  root.id = kRoot;
  root.origin = "task";
  root.state = node_state::evaluated;
  nodes_.push_back(std::move(root));
}

tree tree::from_nodes(std::vector<node> nodes) {
  tree t;
  if (!nodes.empty()) t.nodes_ = std::move(nodes);
  return t;
}

node_id tree::add_child(node_id parent, memory_mode mode, std::vector<node_id> context, double now) {
  node n;
  n.id = node_id(nodes_.size());
  n.parent = parent;
  n.depth = at(parent).depth + 1;
  n.mode = mode;
  n.context = std::move(context);
  n.created_s = now;
  at(parent).children.push_back(n.id);
  nodes_.push_back(std::move(n));
  return nodes_.back().id;
}

std::vector<node_id> tree::path(node_id id, bool with_root) const {
  std::vector<node_id> p;
  for (node_id n = id; n != kNoNode; n = at(n).parent)
    if (n != kRoot || with_root) p.push_back(n);
  std::reverse(p.begin(), p.end());
  return p;
}

node_id tree::best() const {
  node_id best = kNoNode;
  for (const node& n : nodes_)
    if (n.ok() && (best == kNoNode || n.fitness > at(best).fitness)) best = n.id;
  return best;
}

}  // namespace kevolve::search
