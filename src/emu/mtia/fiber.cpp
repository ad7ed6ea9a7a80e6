#include "emu/mtia/fiber.h"

#include <cstdint>

#include <sys/mman.h>

namespace kevolve::emu::mtia {

namespace {
constexpr std::size_t kStackBytes = std::size_t(2) << 20;  // reserved, committed on touch
constexpr std::size_t kGuardBytes = 4096;                   // lowest page: overflow faults
}

fiber::~fiber() {
  if (stack_) munmap(stack_, stack_bytes_);
}

bool fiber::start(entry_fn fn, void* arg) {
  if (!stack_) {
    void* p = mmap(nullptr, kStackBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK,
                   -1, 0);
    if (p == MAP_FAILED) return false;
    mprotect(p, kGuardBytes, PROT_NONE);
    stack_ = p;
    stack_bytes_ = kStackBytes;
  }
  fn_ = fn;
  arg_ = arg;
  done_ = false;
  if (getcontext(&ctx_) != 0) return false;
  ctx_.uc_stack.ss_sp = static_cast<char*>(stack_) + kGuardBytes;
  ctx_.uc_stack.ss_size = stack_bytes_ - kGuardBytes;
  ctx_.uc_link = &caller_;
  const auto self = reinterpret_cast<uintptr_t>(this);
  makecontext(&ctx_, reinterpret_cast<void (*)()>(&fiber::trampoline), 2, static_cast<unsigned>(self & 0xffffffffu),
              static_cast<unsigned>(self >> 32));
  return true;
}

void fiber::trampoline(unsigned lo, unsigned hi) {
  auto* f = reinterpret_cast<fiber*>((static_cast<uintptr_t>(hi) << 32) | lo);
  f->fn_(f->arg_);
  f->done_ = true;
  // returning switches to uc_link (caller_)
}

bool fiber::resume() {
  if (done_) return true;
  swapcontext(&caller_, &ctx_);
  return done_;
}

void fiber::yield() { swapcontext(&ctx_, &caller_); }

}  // namespace kevolve::emu::mtia
