// Shared memory (a memfd) that the evaluator maps and hands to workers: the
// evaluator writes inputs and reads outputs through its own mapping, so
// nothing a kernel does to its mapping (mprotect, signal tricks) can change
// what the evaluator reads.
#pragma once

#include <cstddef>
#include <string>

#include "common/error.h"

namespace kevolve::eval {

class shared_region {
 public:
  static expected<shared_region> create(const std::string& name, size_t bytes);
  shared_region() = default;
  shared_region(shared_region&& o) noexcept;
  shared_region& operator=(shared_region&& o) noexcept;
  shared_region(const shared_region&) = delete;
  shared_region& operator=(const shared_region&) = delete;
  ~shared_region();

  char* data() const { return base_; }
  size_t size() const { return size_; }
  int fd() const { return fd_; }

 private:
  void release();
  int fd_ = -1;
  char* base_ = nullptr;
  size_t size_ = 0;
};

}  // namespace kevolve::eval
