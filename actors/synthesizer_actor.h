// The synthesizer pool: detached actors (synthesis may block: LLM requests),
// each owning its own synthesizer. A synth_request comes back as synth_reply.
#pragma once

#include <string>
#include <vector>

#include <caf/fwd.hpp>

#include "common/error.h"

namespace kevolve::actors {

expected<std::vector<caf::actor>> spawn_synthesizer_pool(caf::actor_system& sys, const std::string& kind, int size);

}  // namespace kevolve::actors
