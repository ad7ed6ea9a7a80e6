// The actor system configuration every rank uses: the message types of
// messages.h registered, scheduler threads bounded (several ranks may share a
// node), CAF's own command line left alone (Boost.Program_options owns it).
#pragma once

#include <caf/actor_system_config.hpp>

namespace kevolve::actors {

class system_config : public caf::actor_system_config {
 public:
  explicit system_config(int threads);
};

}  // namespace kevolve::actors
