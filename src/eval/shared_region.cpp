#include "eval/shared_region.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace kevolve::eval {

expected<shared_region> shared_region::create(const std::string& name, size_t bytes) {
  shared_region r;
  r.fd_ = ::memfd_create(name.c_str(), MFD_CLOEXEC);
  if (r.fd_ < 0) return make_error(errc::io_error, "memfd_create: " + std::string(std::strerror(errno)));
  if (bytes == 0) bytes = 4096;
  if (::ftruncate(r.fd_, static_cast<off_t>(bytes)) != 0)
    return make_error(errc::io_error, "ftruncate shared region to " + std::to_string(bytes) + " bytes: " + std::strerror(errno));
  void* m = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, r.fd_, 0);
  if (m == MAP_FAILED) return make_error(errc::io_error, "mmap shared region: " + std::string(std::strerror(errno)));
  // Where the machine allows huge pages for shared memory, mapping the
  // region into each candidate's process costs far fewer page-table entries.
  ::madvise(m, bytes, MADV_HUGEPAGE);
  r.base_ = static_cast<char*>(m);
  r.size_ = bytes;
  return r;
}

shared_region::shared_region(shared_region&& o) noexcept : fd_(o.fd_), base_(o.base_), size_(o.size_) {
  o.fd_ = -1;
  o.base_ = nullptr;
  o.size_ = 0;
}

shared_region& shared_region::operator=(shared_region&& o) noexcept {
  if (this != &o) {
    release();
    fd_ = o.fd_;
    base_ = o.base_;
    size_ = o.size_;
    o.fd_ = -1;
    o.base_ = nullptr;
    o.size_ = 0;
  }
  return *this;
}

void shared_region::release() {
  if (base_) ::munmap(base_, size_);
  if (fd_ >= 0) ::close(fd_);
  base_ = nullptr;
  fd_ = -1;
  size_ = 0;
}

shared_region::~shared_region() { release(); }

}  // namespace kevolve::eval
