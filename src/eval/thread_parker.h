// Stops a worker's other threads between kernel calls (TRUST row 17).
//
// A kernel can return early and leave a thread finishing its outputs, outside
// the timed call; on a busy machine that thread can be done before the
// evaluator reads the outputs, and the verdict would be a fast "ok". So before
// the worker replies, every other thread of its process is parked in a signal
// handler until the next request: work left running cannot advance while the
// evaluator checks. A thread that does not stop (it blocked the signal) is
// reported, and the evaluator calls that hidden work.
//
// Honest thread pools are unaffected: their idle threads (OpenMP's, with
// OMP_WAIT_POLICY=PASSIVE, which the evaluator sets) sleep in the kernel and
// resume where they were once released.
//
// Threads that exist when the parker is installed are the worker's own (a
// GPU runtime starts helpers when it creates its context) and are never
// signalled: install() runs before any candidate library is loaded, so none
// of them runs candidate code, and a device call the worker makes while the
// candidate's threads are parked cannot wait on one of them. They are known
// by id and start time: a later thread that gets the id of one that exited
// is not taken for it.
#pragma once

#include <signal.h>

#include <chrono>
#include <string>

namespace kevolve::eval {

class thread_parker {
 public:
  // The real-time signal the parker uses; the sandbox keeps candidates from
  // installing their own handler for it.
  static int signal_number() { return SIGRTMIN + 6; }

  // Before the sandbox and before any candidate library is loaded: installs
  // the handler, opens /proc/self/task and notes the threads running now as
  // the worker's own. Returns an empty string on success, else what failed.
  static std::string install();

  // Parks every thread but the caller and the worker's own. True when all
  // stopped within `deadline`; else false, with `why` saying how many did not.
  static bool park_others(std::chrono::milliseconds deadline, std::string& why);
  // The same after a kernel call, saying on stderr (the worker's log, which
  // the evaluator quotes) what did not stop, as `program`.
  static bool park_after_call(const char* program, std::chrono::milliseconds deadline);

  // Lets parked threads run again (before the next kernel call).
  static void release();
};

}  // namespace kevolve::eval
