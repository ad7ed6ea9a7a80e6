// Confines the worker before it loads candidate code: resource limits, an
// unprivileged user when started as root, and a seccomp filter that kills the
// process on fork/exec, networking, ptrace, signals to other processes,
// signal handlers, privileged calls (the clock, devices, file handles), and
// refuses opening files for writing -- or, for a worker run by a profiler
// (which keeps lock and scratch files where TMPDIR points), lets it write
// beneath one directory only, confined by Landlock.
#pragma once

#include <cstdint>
#include <string>

namespace kevolve::eval {

struct sandbox_options {
  uint64_t address_space_bytes = 0;  // RLIMIT_AS, 0 = unchanged
  uint64_t max_output_bytes = 1 << 20;  // RLIMIT_FSIZE for the log file
  bool drop_privileges = true;       // setuid(nobody) when running as root
  bool seccomp = true;
  // Non-empty: writes (create, open for writing, remove, rename, truncate)
  // are allowed beneath this directory and to the NVIDIA device files, and
  // refused by Landlock everywhere else, instead of the seccomp filter
  // refusing every write. Entering the sandbox fails where the kernel has no
  // Landlock: the writes would then be unconfined.
  std::string writable_dir;
  // Non-zero: a signal whose handler the worker installed before the sandbox
  // (thread_parker.h); candidates may not replace it.
  int reserved_signal = 0;
};

// The worker command line's SANDBOX argument: 0 none; 1 the full sandbox
// (nobody when root, seccomp, no writes); 2 for a worker a profiler runs: the
// evaluator's user kept (counters are admin-only on most nodes), seccomp, and
// writes confined by Landlock to the worker's private $TMPDIR, where the
// profiler keeps its lock file.
sandbox_options sandbox_for_mode(int mode);

// Phase 1 (before loading libraries): limits, user, no_new_privs, seccomp.
// Returns an empty string on success, else what failed.
std::string enter_sandbox(const sandbox_options& options);

// Phase 2 (after loading libraries): no more /proc/self access by others.
void seal_process();

}  // namespace kevolve::eval
