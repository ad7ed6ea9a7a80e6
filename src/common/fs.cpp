#include "common/fs.h"
#include "common/scratch.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

namespace kevolve {
namespace fs = std::filesystem;

expected<std::string> read_file(const fs::path& path) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) return make_error(errc::invalid_input, path.string() + ": is a directory, expected a file");
  std::ifstream in(path, std::ios::binary);
  if (!in) return make_error(errc::not_found, path.string() + ": cannot open: " + std::strerror(errno));
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

expected<void> write_file_atomic(const fs::path& path, const std::string& content) {
  const fs::path dir = path.has_parent_path() ? path.parent_path() : fs::path(".");
  std::error_code ec;
  fs::create_directories(dir, ec);
  std::string tmpl = (dir / ("." + path.filename().string() + ".tmp.XXXXXX")).string();
  const int fd = mkstemp(tmpl.data());
  if (fd < 0) return make_error(errc::io_error, path.string() + ": cannot create temporary file: " + std::strerror(errno));
  size_t off = 0;
  while (off < content.size()) {
    const ssize_t n = ::write(fd, content.data() + off, content.size() - off);
    if (n < 0) {
      if (errno == EINTR) continue;
      const std::string why = std::strerror(errno);
      ::close(fd);
      ::unlink(tmpl.c_str());
      return make_error(errc::io_error, path.string() + ": write failed: " + why);
    }
    off += static_cast<size_t>(n);
  }
  if (::fchmod(fd, 0644) != 0 || ::fsync(fd) != 0 || ::close(fd) != 0) {
    ::unlink(tmpl.c_str());
    return make_error(errc::io_error, path.string() + ": fsync/close failed: " + std::strerror(errno));
  }
  if (::rename(tmpl.c_str(), path.c_str()) != 0) {
    const std::string why = std::strerror(errno);
    ::unlink(tmpl.c_str());
    return make_error(errc::io_error, path.string() + ": rename failed: " + why);
  }
  const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
  return {};
}

expected<void> install_file_atomic(const fs::path& from, const fs::path& to) {
  auto bytes = read_file(from);
  if (!bytes) return tl::unexpected(bytes.error());
  return write_file_atomic(to, *bytes);
}

expected<temp_dir> temp_dir::create(const std::string& prefix, const fs::path& in) {
  fs::path root = in;
  if (root.empty()) {
    auto scratch = process_scratch_root();
    if (!scratch) return tl::unexpected(scratch.error());
    root = *scratch;
  }
  std::string tmpl = (root / (prefix + "XXXXXX")).string();
  if (!mkdtemp(tmpl.data()))
    return make_error(errc::io_error, "cannot create temporary directory in " + root.string() + ": " + std::strerror(errno));
  return temp_dir(fs::path(tmpl));
}

temp_dir::temp_dir(temp_dir&& other) noexcept : path_(std::move(other.path_)) { other.path_.clear(); }

temp_dir& temp_dir::operator=(temp_dir&& other) noexcept {
  if (this != &other) {
    if (!path_.empty()) {
      std::error_code ec;
      fs::remove_all(path_, ec);
    }
    path_ = std::move(other.path_);
    other.path_.clear();
  }
  return *this;
}

temp_dir::~temp_dir() {
  if (!path_.empty()) {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
}

}  // namespace kevolve
