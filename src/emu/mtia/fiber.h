// Cooperative fibers (ucontext) so that the programs of one launch can wait
// for each other at barriers and on the reduction network while they run one
// after another on the host thread. A fiber switch happens only when a
// program must wait, so the common case costs two switches per program.
#pragma once

#include <cstddef>

#include <ucontext.h>

namespace kevolve::emu::mtia {

class fiber {
 public:
  using entry_fn = void (*)(void* arg);
  fiber() = default;
  ~fiber();
  fiber(const fiber&) = delete;
  fiber& operator=(const fiber&) = delete;

  // Prepares the fiber to run fn(arg) from the start; false if no stack.
  bool start(entry_fn fn, void* arg);
  // Runs the fiber until it yields or returns; true once it has returned.
  bool resume();
  // From inside the fiber: back to whoever called resume().
  void yield();
  bool done() const { return done_; }

 private:
  static void trampoline(unsigned lo, unsigned hi);
  ucontext_t ctx_{}, caller_{};
  void* stack_ = nullptr;
  std::size_t stack_bytes_ = 0;
  entry_fn fn_ = nullptr;
  void* arg_ = nullptr;
  bool done_ = true;
};

}  // namespace kevolve::emu::mtia
