#include "common/scratch.h"

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>

namespace kevolve {
namespace fs = std::filesystem;

namespace {

constexpr const char* kPrefix = "kevolve-";

// This process's roots, one per $TMPDIR it has seen.
std::mutex g_mu;
std::map<fs::path, fs::path> g_roots;
pid_t g_owner = 0;

void remove_roots_at_exit() {
  std::lock_guard<std::mutex> lock(g_mu);
  // A forked child that exits through exit() must not take its parent's.
  if (g_owner != ::getpid()) return;
  for (const auto& [base, root] : g_roots) {
    std::error_code ec;
    fs::remove_all(root, ec);
  }
  g_roots.clear();
}

// "kevolve-<pid>@<host>-XXXXXX" -> pid and host; false for any other name.
bool parse_root_name(const std::string& name, pid_t& pid, std::string& host) {
  const size_t p = std::strlen(kPrefix);
  if (name.compare(0, p, kPrefix) != 0) return false;
  const size_t at = name.find('@', p);
  const size_t dash = name.rfind('-');
  if (at == std::string::npos || at == p || dash == std::string::npos || dash <= at + 1 || name.size() - dash != 7)
    return false;
  long value = 0;
  for (size_t i = p; i < at; ++i) {
    if (!std::isdigit(static_cast<unsigned char>(name[i])) || value > 1L << 30) return false;
    value = value * 10 + (name[i] - '0');
  }
  if (value <= 0) return false;
  pid = pid_t(value);
  host = name.substr(at + 1, dash - at - 1);
  return true;
}

fs::path temp_base() {
  const char* base = std::getenv("TMPDIR");
  return base && *base ? fs::path(base) : fs::temp_directory_path();
}

}  // namespace

std::string scratch_host_name() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0 || !*buf) return "localhost";
  std::string host = buf;
  for (char& c : host)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_') c = '_';
  return host;
}

size_t remove_orphaned_scratch(const fs::path& dir, const std::string& host) {
  size_t removed = 0;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    pid_t pid = 0;
    std::string owner_host;
    if (!parse_root_name(it->path().filename().string(), pid, owner_host) || owner_host != host) continue;
    if (::kill(pid, 0) == 0 || errno != ESRCH) continue;  // alive (or not ours to signal): kept
    std::error_code rm;
    if (!it->is_directory(rm) || rm) continue;
    if (fs::remove_all(it->path(), rm) > 0 && !rm) ++removed;
  }
  return removed;
}

expected<fs::path> process_scratch_root() {
  std::lock_guard<std::mutex> lock(g_mu);
  const fs::path base = temp_base();
  if (g_owner != ::getpid()) g_roots.clear();  // a forked child makes its own
  if (auto it = g_roots.find(base); it != g_roots.end()) return it->second;
  const std::string host = scratch_host_name();
  remove_orphaned_scratch(base, host);
  std::string tmpl = (base / (kPrefix + std::to_string(::getpid()) + "@" + host + "-XXXXXX")).string();
  if (!::mkdtemp(tmpl.data()))
    return make_error(errc::io_error, "cannot create temporary directory in " + base.string() + ": " + std::strerror(errno));
  if (::chmod(tmpl.c_str(), 0711) != 0) {
    const std::string why = std::strerror(errno);
    ::rmdir(tmpl.c_str());
    return make_error(errc::io_error, "cannot set the mode of " + tmpl + ": " + why);
  }
  if (g_owner == 0) std::atexit(remove_roots_at_exit);
  g_owner = ::getpid();
  return g_roots[base] = fs::path(tmpl);
}

}  // namespace kevolve
