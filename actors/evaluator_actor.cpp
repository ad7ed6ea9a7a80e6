#include "actors/evaluator_actor.h"

#include <caf/all.hpp>

#include "actors/messages.h"

namespace kevolve::actors {
namespace {

struct worker_state {
  std::shared_ptr<sweep::evaluation_service> service;
};

// Detached: one evaluation at a time, each blocking for seconds.
caf::behavior evaluator_worker(caf::stateful_actor<worker_state>* self, std::shared_ptr<sweep::evaluation_service> service) {
  self->state.service = std::move(service);
  return {
      [=](const sweep::eval_request& r) { return self->state.service->evaluate(r); },
  };
}

struct front_state {
  std::shared_ptr<sweep::evaluation_service> service;
  caf::actor worker;
};

// The evaluator's mailbox: sees each request as it arrives (the worker is
// busy with an earlier one), lets the service start its compile, and hands
// it on; the worker's result goes straight back to whoever asked.
caf::behavior evaluator_front(caf::stateful_actor<front_state>* self, std::shared_ptr<sweep::evaluation_service> service) {
  self->state.service = service;
  self->state.worker = self->spawn<caf::detached + caf::linked>(evaluator_worker, std::move(service));
  return {
      [=](const sweep::eval_request& r) {
        self->state.service->prepare(r);
        return self->delegate(self->state.worker, r);
      },
  };
}

}  // namespace

caf::actor spawn_evaluator_actor(caf::actor_system& sys, std::shared_ptr<sweep::evaluation_service> service) {
  return sys.spawn(evaluator_front, std::move(service));
}

}  // namespace kevolve::actors
