// Rank 0's scheduler actor: owns the sweep::coordinator and delivers what it
// asks for -- requests to local evaluator actors or, through the bridge, to
// evaluator ranks; children to the synthesizer pool; checkpoints to the
// store actor -- and feeds every reply back. Ends by fulfilling `done`.
#pragma once

#include <atomic>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <vector>

#include <caf/actor.hpp>

#include "sweep/coordinator.h"

namespace kevolve::actors {

struct coordinator_wiring {
  std::unique_ptr<sweep::coordinator> core;
  caf::actor bridge;                       // invalid without remote ranks
  std::map<int, caf::actor> local;         // local evaluator id -> actor (registered with `core`)
  std::vector<caf::actor> synthesizers;
  caf::actor store;
  std::function<void(const sweep::coordinator&)> on_progress;  // after each verdict
  std::function<void(const std::string&)> on_notice;
  const std::atomic<int>* signal = nullptr;
  std::promise<sweep::outcome>* done = nullptr;
};

caf::actor spawn_coordinator_actor(caf::actor_system& sys, coordinator_wiring* wiring);

}  // namespace kevolve::actors
