// Whole-buffer reads and writes on pipes, retrying short transfers and
// EINTR. Shared by the evaluator and kevolve-worker; header-only so the
// worker stays free of the evaluator's libraries.
#pragma once

#include <unistd.h>

#include <cerrno>
#include <cstddef>

namespace kevolve::eval {

inline bool read_all(int fd, void* buf, size_t n) {
  auto* p = static_cast<char*>(buf);
  while (n) {
    const ssize_t r = ::read(fd, p, n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    p += r;
    n -= static_cast<size_t>(r);
  }
  return true;
}

inline bool write_all(int fd, const void* buf, size_t n) {
  auto* p = static_cast<const char*>(buf);
  while (n) {
    const ssize_t r = ::write(fd, p, n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    p += r;
    n -= static_cast<size_t>(r);
  }
  return true;
}

}  // namespace kevolve::eval
