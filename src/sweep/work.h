// What travels between the coordinator and the evaluators: a candidate to
// evaluate and its verdict, in plain data (the actors give them inspect()
// functions for CAF and the MPI codec). Also what a rank says about itself.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "spec/operator_spec.h"
#include "store/sweep_record.h"

namespace kevolve::sweep {

// How candidates of a task are evaluated (from the sweep's `evaluator:`).
struct eval_settings {
  int threads = 0;
  double budget_seconds = 0.2;
  int timeout_ms = 10000;
  int trials = 3;
  uint64_t seed = 1;
  int torch_baselines = -1;  // PyTorch baselines: -1 the backend's default, 0 off, 1 on
  int torch_compile = -1;    // torch.compile among them: -1 the backend's default, 0 off, 1 on
  int ncu = -1;              // Nsight Compute counters (cuda): -1 when found, 0 off, 1 on
  std::string fitness;       // torch | baseline; empty: torch where PyTorch is timed
};

struct eval_request {
  uint64_t id = 0;        // unique within one run of the coordinator
  std::string task_id;    // "<operator>/<variant>/<backend>"
  std::string op_source;  // the operator: a catalog name or a YAML path (shared file system)
  std::string op_hash;    // of the operator's files as the coordinator read them
  std::string variant;
  std::string backend;
  eval_settings settings;
  int64_t node = -1;
  std::string code;
  // The sweep's timed shapes of the operator (`sweep.shapes`); empty: the
  // operator's own.
  std::vector<spec::shape_point> shapes;
  // The task's best fitness when the request was made: the evaluator profiles
  // (Nsight Compute) only a candidate that beats it.
  double best_fitness = 0.0;
};

struct eval_result {
  uint64_t id = 0;
  int32_t rank = 0;
  std::string error;  // an operational failure on the evaluator (not the candidate's fault)
  std::string status;  // eval::to_string(status)
  double fitness = 0.0;
  std::string reason;
  std::string baseline;  // the baseline's display name
  std::string fitness_over;  // what the fitness is a speedup over (eval::describe_fitness)
  std::vector<store::shape_measurement> shapes;
  double seconds = 0.0;  // spent evaluating on the rank (building the task's evaluator excluded)
};

// An evaluator rank introduces itself; `error` when it cannot serve.
struct rank_hello {
  int32_t rank = 0;
  std::string host;
  int32_t pid = 0;
  int32_t local_rank = 0;
  std::string backend;
  std::string error;
  std::string kevolve_version;
};

// Sent to an evaluator rank once every rank has said hello.
struct rank_start {
  int32_t device_index = -1;  // which GPU of the node it owns (-1: none)
};

// What a rank reports about itself, periodically and at the end (kept in
// the store's `ranks` table).
using rank_stats = store::rank_record;

// Hash of an operator's YAML, reference and baseline files: coordinator and
// evaluators compare it, so that nodes with different copies refuse to work.
std::string operator_files_hash(const spec::operator_spec& op);

}  // namespace kevolve::sweep
