// An evaluator rank's agent: says hello to the coordinator, passes requests
// to the rank's evaluator actor and results back, reports counters on a
// heartbeat, forwards a signal received here to rank 0, and stops on the
// coordinator's shutdown (or on its own when rank 0 has gone silent).
#pragma once

#include <atomic>
#include <future>
#include <string>

#include <caf/fwd.hpp>

#include "sweep/work.h"

namespace kevolve::actors {

struct rank_config {
  sweep::rank_hello hello;       // who this rank is (error set: it cannot serve)
  double heartbeat_seconds = 2;
  double silence_seconds = 60;   // rank 0 not heard from for this long: leave
  double grace_seconds = 60;     // after a local signal, leave if rank 0 does not stop us
  const std::atomic<int>* signal = nullptr;  // set by the signal handler
};

// How the rank ended: finalize MPI with the others, and the exit status.
struct rank_exit {
  bool finalize = true;
  int status = 0;
  std::string message;
};

caf::actor spawn_rank_actor(caf::actor_system& sys, rank_config config, caf::actor bridge, caf::actor evaluator,
                            std::promise<rank_exit>* done);

}  // namespace kevolve::actors
