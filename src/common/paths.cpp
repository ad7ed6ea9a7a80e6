#include "common/paths.h"

#include <unistd.h>

#include <cstdlib>

namespace kevolve {
namespace fs = std::filesystem;

namespace {
const char* env(const char* name) {
  const char* v = std::getenv(name);
  return (v && *v) ? v : nullptr;
}
}  // namespace

fs::path data_root() {
  if (const char* home = env("KEVOLVE_HOME")) return home;
  return KEVOLVE_SOURCE_DIR;
}

fs::path cache_root() {
  if (const char* dir = env("KEVOLVE_CACHE_DIR")) return dir;
  if (const char* xdg = env("XDG_CACHE_HOME")) return fs::path(xdg) / "kevolve";
  if (const char* home = env("HOME")) return fs::path(home) / ".cache" / "kevolve";
  return fs::temp_directory_path() / "kevolve-cache";
}

fs::path worker_executable() {
  if (const char* w = env("KEVOLVE_WORKER")) return w;
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) return self.parent_path() / "kevolve-worker";
  return "kevolve-worker";
}

const char* kevolve_version() { return KEVOLVE_VERSION; }

}  // namespace kevolve
