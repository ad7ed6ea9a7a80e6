// The thread parker on its own (thread_parker.h), in a child process as a
// worker would use it: the threads of the worker itself, started before the
// parker is installed (a GPU runtime's helpers, which no machine without a
// GPU has), run on while the threads a kernel started are parked.
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "eval/thread_parker.h"

namespace kevolve::eval {
namespace {

using namespace std::chrono_literals;

std::atomic<uint64_t> g_helper_steps{0}, g_kernel_steps{0};

[[noreturn]] void finish(int code, const std::string& why) {
  std::fprintf(stderr, "%s\n", why.c_str());
  std::_Exit(code);
}

[[noreturn]] void park_beside_a_helper_thread() {
  std::thread([] {
    for (;;) g_helper_steps.fetch_add(1, std::memory_order_relaxed);
  }).detach();
  if (const std::string err = thread_parker::install(); !err.empty()) finish(10, err);
  std::thread([] {
    for (;;) g_kernel_steps.fetch_add(1, std::memory_order_relaxed);
  }).detach();
  std::string why;
  if (!thread_parker::park_others(2000ms, why)) finish(1, "parking failed: " + why);
  const uint64_t helper = g_helper_steps.load(), kernel = g_kernel_steps.load();
  std::this_thread::sleep_for(100ms);
  if (g_helper_steps.load() == helper) finish(2, "the thread started before install() was parked");
  if (g_kernel_steps.load() != kernel) finish(3, "the thread started after install() ran on while parked");
  thread_parker::release();
  std::this_thread::sleep_for(100ms);
  if (g_kernel_steps.load() == kernel) finish(4, "the parked thread did not resume after release()");
  finish(0, "");
}

TEST(ThreadParker, TheWorkersOwnThreadsRunOnWhileTheKernelsAreParked) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(park_beside_a_helper_thread(), ::testing::ExitedWithCode(0), "");
}

}  // namespace
}  // namespace kevolve::eval
