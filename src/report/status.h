// `kevolve status STORE`: where a sweep stands, from its last checkpoint
// (read while the job runs): tasks done, running and pending, best results
// so far, evaluations by verdict, the evaluator ranks of the latest session,
// and an estimate of the time left from each task's time per evaluation and
// the stop rules.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "search/stop_rules.h"
#include "store/sweep_record.h"

namespace kevolve::report {

struct task_status {
  std::string task;
  std::string state;  // done (has a stop reason) | running (has children) | pending (not started)
  std::string stop_reason;
  int64_t evaluations = 0;
  int64_t pending_nodes = 0;  // written or being written, not yet evaluated
  double best_speedup = 0.0;  // 0: no correct kernel yet
  int64_t best_node = -1;
  double seconds = 0.0;
  double seconds_left = 0.0;  // < 0: unknown (no max_evaluations or max_seconds)
};

struct sweep_status {
  std::vector<task_status> tasks;
  int done = 0, running = 0, pending = 0;
  int64_t evaluations = 0;
  int64_t pending_nodes = 0;
  std::map<std::string, int64_t> by_status;  // verdicts of evaluated nodes
  int32_t session = -1;                      // the latest session in /ranks, -1: none
  std::vector<store::rank_record> ranks;     // the latest session's rows
  int parallel = 1;                          // evaluator ranks the estimate divides by
  double seconds_left = 0.0;                 // < 0: unknown
  double seconds_per_evaluation = 0.0;       // over every task, 0: none yet
};

// Per task: seconds per evaluation (its own, else the sweep's), times the
// evaluations left by max_evaluations, capped by max_seconds - time spent.
// The sweep: the sum over tasks divided by the latest session's evaluator
// ranks that are not retired (1 without a rank table). stagnation and
// target_fitness may stop a task sooner, so it is an upper estimate.
sweep_status compute_status(const store::sweep_record& r, const search::stop_config& stop);

// The text `kevolve status` prints. `checkpoint_age_s` < 0: unknown.
std::string status_text(const sweep_status& s, const store::sweep_record& r, const std::string& store_path,
                        double checkpoint_age_s);

// "45 s", "3 min 20 s", "2 h 05 min".
std::string duration_text(double seconds);

}  // namespace kevolve::report
