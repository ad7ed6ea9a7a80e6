#include "actors/system_config.h"

#include "actors/messages.h"

namespace kevolve::actors {

system_config::system_config(int threads) {
  add_message_types<caf::id_block::kevolve>();
  set("scheduler.max-threads", std::max(1, threads));
  // Threads that wait on a condition variable when there is nothing to do:
  // the default work-stealing policy naps in 50 us steps after every
  // message, which on a node of many idle ranks costs more CPU than the work.
  set("scheduler.policy", caf::atom("sharing"));
  set("logger.console-verbosity", caf::atom("quiet"));
}

}  // namespace kevolve::actors
