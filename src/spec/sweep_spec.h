// A sweep as configured in YAML (config/quickstart.yaml): which operators,
// variants and backends, how each task searches, how candidates are
// evaluated, how often the store is checkpointed.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "common/error.h"
#include "search/engine.h"

namespace kevolve::spec {

struct sweep_spec {
  std::filesystem::path file;
  std::string text;  // the YAML, verbatim (kept in the store)
  std::vector<std::string> operators;  // names; "all" expanded by the loader
  bool all_variants = false;           // false: each operator's first variant
  std::vector<std::string> backends = {"cpu"};
  std::string synthesizer = "builtin";
  search::search_config search;
  // evaluator
  int threads = 0;
  double budget_seconds = 0.2;
  int timeout_ms = 10000;
  int trials = 3;
  // store
  double checkpoint_seconds = 30.0;
};

// Loads and validates a sweep file; errors say file:line: 'key' expectation.
expected<sweep_spec> load_sweep(const std::filesystem::path& file);

// What must match for --resume: everything but the checkpoint period.
std::string compatibility_text(const sweep_spec& s);

}  // namespace kevolve::spec
