// When a task's search ends.
#pragma once

#include <cstdint>
#include <string>

namespace kevolve::search {

struct stop_config {
  double target_fitness = 0.0;   // 0: none
  int64_t max_evaluations = 0;   // 0: none
  double max_seconds = 0.0;      // of evaluation time spent on the task; 0: none
  int64_t stagnation = 0;        // evaluations without a better best; 0: none
};

struct search_progress {
  int64_t evaluations = 0;
  int64_t since_improvement = 0;
  double best_fitness = 0.0;
  double elapsed_seconds = 0.0;
};

// "" while the search may go on, else why it stops.
std::string stop_reason(const stop_config& c, const search_progress& p);

}  // namespace kevolve::search
