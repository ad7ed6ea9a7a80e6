// The evaluator: an actor that answers each eval_request with an
// eval_result. A front actor takes requests as they come and lets the
// service prepare them (compile ahead), a linked detached worker evaluates
// them one at a time (evaluations block for seconds).
#pragma once

#include <memory>

#include <caf/fwd.hpp>

#include "sweep/evaluation_service.h"

namespace kevolve::actors {

caf::actor spawn_evaluator_actor(caf::actor_system& sys, std::shared_ptr<sweep::evaluation_service> service);

}  // namespace kevolve::actors
