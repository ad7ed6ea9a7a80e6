#include "actors/store_actor.h"

#include <caf/all.hpp>

#include "actors/messages.h"
#include "store/hdf5_store.h"

namespace kevolve::actors {
namespace {

struct store_state {
  std::filesystem::path path;
};

caf::behavior store_actor(caf::stateful_actor<store_state>* self, std::filesystem::path path) {
  self->state.path = std::move(path);
  return {
      [=](uint64_t sequence, const store::sweep_record& record) {
        auto written = store::write_store(self->state.path, record);
        return checkpoint_done{sequence, written ? "" : written.error().message};
      },
  };
}

}  // namespace

caf::actor spawn_store_actor(caf::actor_system& sys, std::filesystem::path store) {
  return sys.spawn<caf::detached>(store_actor, std::move(store));
}

}  // namespace kevolve::actors
