#include "actors/evaluator_actor.h"

#include <caf/all.hpp>

#include "actors/messages.h"

namespace kevolve::actors {
namespace {

struct evaluator_state {
  std::shared_ptr<sweep::evaluation_service> service;
};

caf::behavior evaluator_actor(caf::stateful_actor<evaluator_state>* self, std::shared_ptr<sweep::evaluation_service> service) {
  self->state.service = std::move(service);
  return {
      [=](const sweep::eval_request& r) { return self->state.service->evaluate(r); },
  };
}

}  // namespace

caf::actor spawn_evaluator_actor(caf::actor_system& sys, std::shared_ptr<sweep::evaluation_service> service) {
  return sys.spawn<caf::detached>(evaluator_actor, std::move(service));
}

}  // namespace kevolve::actors
