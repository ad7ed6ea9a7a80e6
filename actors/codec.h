// Messages between ranks: a caf::message of registered types, serialized
// with CAF's binary serializer inside the transport's versioned frame.
#pragma once

#include <vector>

#include <caf/fwd.hpp>
#include <caf/message.hpp>

#include "common/error.h"

namespace kevolve::actors {

// Errors when an element type is not registered (CAF would write nothing).
expected<std::vector<char>> encode(caf::actor_system& sys, const caf::message& m);
// Errors name the source rank and what is wrong (version, truncation).
expected<caf::message> decode(caf::actor_system& sys, const std::vector<char>& bytes, int source);

}  // namespace kevolve::actors
