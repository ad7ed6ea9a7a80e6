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
        synth::synthesis_result out;
        if (self->state.synthesizer) out = self->state.synthesizer->write(r.job.request);
        else out.error = "no synthesizer named '" + kind + "'";
        return synth_reply{r.job, std::move(out)};
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
