// Wiring of the actors on each rank. Rank 0 (or the only process) runs the
// coordinator with its synthesizer pool and store actor, and either local
// evaluator actors (no launcher, or a job of one rank) or the MPI bridge to
// evaluator ranks. Ranks >= 1 run a bridge, a rank actor and an evaluator.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>

#include "common/error.h"
#include "spec/sweep_spec.h"
#include "sweep/coordinator.h"
#include "sweep/evaluation_service.h"
#include "transport/launch.h"
#include "transport/transport.h"

namespace kevolve::actors {

using service_factory = std::function<std::shared_ptr<sweep::evaluation_service>(int rank, const std::string& backend)>;

struct coordinator_run {
  std::unique_ptr<sweep::scheduler> scheduler;
  transport::transport* link = nullptr;  // null: one process
  service_factory make_service;          // for local evaluators
  std::function<void(const sweep::coordinator&)> on_progress;
  std::function<void(const std::string&)> on_notice;
  const std::atomic<int>* signal = nullptr;
  int synthesizers = 2;
  int threads = 4;  // CAF scheduler threads
};

// Runs the sweep to its end; the outcome says how it ended. Errors: the
// actors could not be set up (no synthesizer, no backend here).
expected<sweep::outcome> run_coordinator(coordinator_run run);

struct evaluator_run {
  transport::transport* link = nullptr;
  transport::launch_info launch;
  const spec::sweep_spec* spec = nullptr;
  service_factory make_service;
  const std::atomic<int>* signal = nullptr;
  int threads = 2;
};

// The backend this rank serves: the YAML rank map, else KEVOLVE_BACKEND, else
// by probing: of the sweep's backends this node can evaluate (device
// backends first, then the others, each in sweep order), rank r takes the
// ((r - 1) mod n)-th. The error says why it can serve none.
expected<std::string> choose_backend(const spec::sweep_spec& spec, int rank);

// Rank 0 could not start the sweep: tells every evaluator rank to stop.
void stop_evaluator_ranks(transport::transport& link);

// Serves until the coordinator says stop. Returns the exit status, and
// whether MPI may be finalized together with the other ranks.
std::pair<int, bool> run_evaluator_rank(evaluator_run run);

}  // namespace kevolve::actors
