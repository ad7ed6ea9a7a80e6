// Confines the worker before it loads candidate code: resource limits, an
// unprivileged user when started as root, and a seccomp filter that kills the
// process on fork/exec, networking, ptrace, signals to other processes,
// signal handlers, privileged calls (the clock, devices, file handles), and
// refuses opening files for writing.
#pragma once

#include <cstdint>
#include <string>

namespace kevolve::eval {

struct sandbox_options {
  uint64_t address_space_bytes = 0;  // RLIMIT_AS, 0 = unchanged
  uint64_t max_output_bytes = 1 << 20;  // RLIMIT_FSIZE for the log file
  bool drop_privileges = true;       // setuid(nobody) when running as root
  bool seccomp = true;
};

// Phase 1 (before loading libraries): limits, user, no_new_privs, seccomp.
// Returns an empty string on success, else what failed.
std::string enter_sandbox(const sandbox_options& options);

// Phase 2 (after loading libraries): no more /proc/self access by others.
void seal_process();

}  // namespace kevolve::eval
