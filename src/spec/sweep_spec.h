// A sweep as configured in YAML (config/quickstart.yaml): which operators,
// variants and backends, how each task searches, how candidates are
// evaluated, how often the store is checkpointed.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "common/error.h"
#include "llm/config.h"
#include "spec/operator_spec.h"
#include "search/engine.h"

namespace kevolve::spec {

// Evaluator ranks [first, last] (last -1: to the end) serve `backend`.
struct rank_range {
  int first = 1;
  int last = -1;
  std::string backend;
};

// How the distributed runtime runs the sweep (`runtime:`).
struct runtime_spec {
  std::vector<rank_range> ranks;   // explicit rank map; empty: KEVOLVE_BACKEND or probing
  double deadline_seconds = 900;   // an evaluation not answered by then goes elsewhere
  double silence_seconds = 60;     // a rank not heard from for this long is retired
  double heartbeat_seconds = 2;    // how often evaluator ranks report
  double grace_seconds = 60;       // after a signal: final checkpoint and exit within this
  int queue_depth = 2;             // requests held by one evaluator (running + waiting)
  double hello_seconds = 120;      // how long rank 0 waits for every rank to say hello
};

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
  std::string torch_baselines = "auto";  // auto (on where the backend has a PyTorch: cpu, cuda), on, off
  std::string torch_compile = "auto";    // torch.compile beside eager: auto (where the backend has it), on, off
  std::string fitness;                   // torch | baseline; empty: torch where PyTorch is timed, else baseline
  std::string ncu = "auto";              // Nsight Compute counters (cuda): auto (when found), on, off
  // store
  double checkpoint_seconds = 30.0;
  // fair share between tasks: operator name -> weight (default 1)
  std::map<std::string, double> priorities;
  // `sweep.shapes`: operator name -> the timed shapes this sweep uses in place
  // of the operator's own (holdout shapes stay); absent: the operator's.
  std::map<std::string, std::vector<shape_point>> shapes;
  runtime_spec runtime;
  llm::llm_config llm;  // `llm:`: endpoints for the llm synthesizer
};

// The backend the rank map gives evaluator rank `rank`, or "" when it says nothing.
std::string backend_for_rank(const runtime_spec& r, int rank);

// Loads and validates a sweep file; errors say file:line: 'key' expectation.
expected<sweep_spec> load_sweep(const std::filesystem::path& file);

// What must match for --resume: everything but the checkpoint period.
std::string compatibility_text(const sweep_spec& s);

}  // namespace kevolve::spec
