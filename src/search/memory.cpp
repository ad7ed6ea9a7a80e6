#include "search/memory.h"

#include <algorithm>

namespace kevolve::search {
namespace {

// Evaluated nodes by fitness (best first), ties by id.
std::vector<node_id> ranked(const tree& t, const std::vector<node_id>& ids) {
  std::vector<node_id> out;
  for (node_id id : ids)
    if (t.at(id).state == node_state::evaluated) out.push_back(id);
  std::stable_sort(out.begin(), out.end(), [&](node_id a, node_id b) { return t.at(a).fitness > t.at(b).fitness; });
  return out;
}

}  // namespace

bool valid_memory_mode_name(const std::string& s) {
  memory_mode m;
  return s == "adaptive" || parse_memory_mode(s, m);
}

std::vector<node_id> context_for(memory_mode m, const tree& t, node_id parent, int max_context) {
  std::vector<node_id> ctx;
  const size_t cap = size_t(std::max(1, max_context));
  switch (m) {
    case memory_mode::reset: return ctx;
    case memory_mode::inherit: {
      // The parent first, then its ancestors, nearest first (the synthesizer
      // contract: context.front() is the parent); the most recent steps
      // matter most, so a long line is cut at the old end.
      ctx = t.path(parent);
      std::reverse(ctx.begin(), ctx.end());
      if (ctx.size() > cap) ctx.resize(cap);
      return ctx;
    }
    case memory_mode::compare_siblings: {
      ctx.push_back(parent);
      for (node_id c : ranked(t, t.at(parent).children))
        if (ctx.size() < cap) ctx.push_back(c);
      return ctx;
    }
    case memory_mode::merge: {
      ctx.push_back(parent);
      const std::vector<node_id> line = t.path(parent);
      std::vector<node_id> all;
      for (const node& n : t.nodes())
        if (n.ok() && std::find(line.begin(), line.end(), n.id) == line.end()) all.push_back(n.id);
      for (node_id c : ranked(t, all))
        if (ctx.size() < std::min<size_t>(cap, 3)) ctx.push_back(c);
      return ctx;
    }
  }
  return ctx;
}

memory_choice choose_memory(const memory_config& c, const tree& t, node_id selected, rng& r) {
  memory_choice choice;
  if (selected == kRoot) return choice;  // nothing to build on: sample afresh
  memory_mode mode = memory_mode::inherit;
  if (c.mode != "adaptive") {
    parse_memory_mode(c.mode, mode);
  } else {
    const node& p = t.at(selected);
    int evaluated_children = 0;
    for (node_id ch : p.children) evaluated_children += t.at(ch).state == node_state::evaluated;
    bool others_ok = false;
    for (const node& n : t.nodes()) others_ok |= n.ok() && n.id != selected;
    const double x = r.uniform();
    if (!p.ok()) mode = memory_mode::inherit;  // repair from its diagnostics
    else if (x < c.reset_probability) mode = memory_mode::reset;
    else if (evaluated_children >= 2 && x < 0.55) mode = memory_mode::compare_siblings;
    else if (others_ok && x < 0.75) mode = memory_mode::merge;
    else mode = memory_mode::inherit;
  }
  if (mode == memory_mode::reset) return choice;
  choice.parent = selected;
  choice.mode = mode;
  choice.context = context_for(mode, t, selected, c.max_context);
  return choice;
}

}  // namespace kevolve::search
