#include "common/paths.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <string>

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

fs::path python_executable() {
  if (const char* p = env("KEVOLVE_PYTHON")) return p;
  // The project virtualenv of scripts/install-python.sh (pinned PyTorch).
  const fs::path venv = data_root() / ".venv" / "bin" / "python";
  if (::access(venv.c_str(), X_OK) == 0) return venv;
  const std::string path = env("PATH") ? env("PATH") : "/usr/bin:/bin";
  for (size_t begin = 0; begin <= path.size();) {
    const size_t end = std::min(path.find(':', begin), path.size());
    const fs::path candidate = fs::path(path.substr(begin, end - begin)) / "python3";
    if (end > begin && ::access(candidate.c_str(), X_OK) == 0) return candidate;
    begin = end + 1;
  }
  return "python3";
}

const char* kevolve_version() { return KEVOLVE_VERSION; }

}  // namespace kevolve
