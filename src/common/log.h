// Logging through spdlog. Messages go to stderr so that stdout stays for
// tables and JSON. Secrets must never be passed to these functions.
#pragma once

#include <spdlog/spdlog.h>

namespace kevolve::log {

// Sets the global level from "trace|debug|info|warn|error|off".
void set_level(const std::string& level);

using spdlog::debug;
using spdlog::error;
using spdlog::info;
using spdlog::warn;

}  // namespace kevolve::log
