#include "actors/bridge_actor.h"

#include <caf/all.hpp>

#include "actors/codec.h"
#include "actors/messages.h"
#include "common/log.h"

namespace kevolve::actors {
namespace {

struct bridge_state {
  transport::transport* link = nullptr;
};

caf::behavior bridge_actor(caf::stateful_actor<bridge_state>* self, transport::transport* link) {
  self->state.link = link;
  return {
      [=](route_atom, int32_t dest, const caf::message& m) {
        auto bytes = encode(self->system(), m);
        if (!bytes) {
          log::error("bridge: {}", bytes.error().message);
          return;
        }
        self->state.link->send(dest, std::move(*bytes));
      },
      // Replied after everything sent before it is on the transport.
      [=](flush_atom) { return flush_atom::value; },
  };
}

}  // namespace

caf::actor spawn_bridge(caf::actor_system& sys, transport::transport& t) { return sys.spawn(bridge_actor, &t); }

void start_delivery(caf::actor_system& sys, transport::transport& t, caf::actor receiver) {
  t.start([&sys, receiver](int source, std::vector<char> bytes) {
    auto m = decode(sys, bytes, source);
    if (m) caf::anon_send(receiver, std::move(*m));
    else caf::anon_send(receiver, codec_failure{source, m.error().message});
  });
}

}  // namespace kevolve::actors
