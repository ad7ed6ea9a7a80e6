#include "actors/synthesizer_actor.h"

#include <caf/all.hpp>

#include "actors/messages.h"
#include "synth/factory.h"

namespace kevolve::actors {
namespace {

struct synth_state {
  std::unique_ptr<synth::synthesizer> synthesizer;
};

caf::behavior synthesizer_actor(caf::stateful_actor<synth_state>* self, const std::string& kind) {
  if (auto s = synth::make_synthesizer(kind)) self->state.synthesizer = std::move(*s);
  return {
      [=](const synth_request& r) {
        synth_reply reply{r.job, {}, {}};
        if (!self->state.synthesizer) reply.result.error = "no synthesizer named '" + kind + "'";
        else if (r.job.note) reply.note = self->state.synthesizer->write_note(*r.job.note);
        else reply.result = self->state.synthesizer->write(r.job.request);
        return reply;
      },
  };
}

}  // namespace

expected<std::vector<caf::actor>> spawn_synthesizer_pool(caf::actor_system& sys, const std::string& kind, int size) {
  if (auto s = synth::make_synthesizer(kind); !s) return tl::unexpected(s.error());
  std::vector<caf::actor> pool;
  for (int i = 0; i < std::max(1, size); ++i) pool.push_back(sys.spawn<caf::detached>(synthesizer_actor, kind));
  return pool;
}

}  // namespace kevolve::actors
