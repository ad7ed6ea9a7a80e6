#include "common/log.h"

#include <spdlog/sinks/stdout_color_sinks.h>

namespace kevolve::log {

void set_level(const std::string& level) {
  static bool configured = false;
  if (!configured) {
    auto logger = spdlog::stderr_color_mt("kevolve");
    logger->set_pattern("[%H:%M:%S.%e] %^%l%$ %v");
    spdlog::set_default_logger(logger);
    configured = true;
  }
  spdlog::set_level(spdlog::level::from_str(level));
}

}  // namespace kevolve::log
