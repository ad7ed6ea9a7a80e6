// Whole-buffer reads and writes on pipes, retrying short transfers and
// EINTR, and one message with file descriptors over a Unix socket. Shared by the evaluator and kevolve-worker; header-only so the
// worker stays free of the evaluator's libraries.
#pragma once

#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstring>
#include <vector>

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

// One message of `n` bytes with up to kMaxFds file descriptors attached
// (SCM_RIGHTS) over a Unix stream socket. send_with_fds: the bytes sent, or
// -1 with errno. recv_with_fds: the bytes received (0: the peer closed, -1:
// error), the fds appended to `fds`; `truncated` when more fds came than fit.
constexpr size_t kMaxFds = 4;

inline ssize_t send_with_fds(int sock, const void* buf, size_t n, const std::vector<int>& fds) {
  iovec iov{const_cast<void*>(buf), n};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * kMaxFds)] = {};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  if (!fds.empty()) {
    if (fds.size() > kMaxFds) {
      errno = EINVAL;
      return -1;
    }
    msg.msg_control = control;
    msg.msg_controllen = CMSG_SPACE(sizeof(int) * fds.size());
    cmsghdr* c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int) * fds.size());
    std::memcpy(CMSG_DATA(c), fds.data(), sizeof(int) * fds.size());
  }
  ssize_t r;
  do r = ::sendmsg(sock, &msg, MSG_NOSIGNAL);
  while (r < 0 && errno == EINTR);
  return r;
}

inline ssize_t recv_with_fds(int sock, void* buf, size_t n, std::vector<int>& fds, bool& truncated) {
  iovec iov{buf, n};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * kMaxFds)] = {};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  ssize_t r;
  do r = ::recvmsg(sock, &msg, MSG_CMSG_CLOEXEC | MSG_WAITALL);
  while (r < 0 && errno == EINTR);
  truncated = (msg.msg_flags & MSG_CTRUNC) != 0;
  if (r <= 0) return r;
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c))
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
      for (size_t i = 0; i < (c->cmsg_len - CMSG_LEN(0)) / sizeof(int); ++i) {
        int fd;
        std::memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof fd);
        fds.push_back(fd);
      }
  return r;
}

}  // namespace kevolve::eval
