#include "actors/system_config.h"

#include "actors/messages.h"

namespace kevolve::actors {

system_config::system_config(int threads) {
  add_message_types<caf::id_block::kevolve>();
  set("scheduler.max-threads", std::max(1, threads));
  set("logger.console-verbosity", caf::atom("quiet"));
}

}  // namespace kevolve::actors
