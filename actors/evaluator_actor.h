// The evaluator: a detached actor (evaluations block for seconds) owning an
// evaluation service; answers each eval_request with an eval_result.
#pragma once

#include <memory>

#include <caf/fwd.hpp>

#include "sweep/evaluation_service.h"

namespace kevolve::actors {

caf::actor spawn_evaluator_actor(caf::actor_system& sys, std::shared_ptr<sweep::evaluation_service> service);

}  // namespace kevolve::actors
