// Memory modes: for each expansion, which earlier candidates the synthesizer
// is shown. A fixed mode, or "adaptive": repair a failed parent with its
// trajectory, compare siblings once a parent has several evaluated children,
// merge with the best other candidate, and reset now and then.
#pragma once

#include <string>
#include <vector>

#include "common/rng.h"
#include "search/tree.h"

namespace kevolve::search {

struct memory_config {
  std::string mode = "adaptive";  // adaptive | inherit | compare_siblings | merge | reset
  double reset_probability = 0.05;  // adaptive
  int max_context = 8;              // nodes shown at most
};

struct memory_choice {
  node_id parent = kRoot;  // a reset grows from the root
  memory_mode mode = memory_mode::reset;
  std::vector<node_id> context;
};

// `selected` is what the selection policy chose.
memory_choice choose_memory(const memory_config& c, const tree& t, node_id selected, rng& r);

// The context a mode shows for `parent` (see memory_mode).
std::vector<node_id> context_for(memory_mode m, const tree& t, node_id parent, int max_context);

bool valid_memory_mode_name(const std::string& s);

}  // namespace kevolve::search
