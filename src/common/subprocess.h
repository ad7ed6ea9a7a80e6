// Runs a trusted tool (compiler, probe) as a child process with a hard time
// limit; stdout and stderr are captured together. Candidate kernels never go
// through here: they run in the sandboxed worker (eval/worker_client.h).
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/error.h"

namespace kevolve {

struct subprocess_options {
  std::chrono::milliseconds timeout{std::chrono::seconds(60)};
  std::string cwd;                                // empty: inherit
  std::optional<std::vector<std::string>> env;   // nullopt: inherit
  size_t max_output_bytes = 1 << 20;             // keep the tail beyond this
  // Called with each piece of output as it arrives (it is kept in
  // `output` as well); empty: none.
  std::function<void(std::string_view)> on_output;
};

struct subprocess_result {
  int exit_code = -1;      // valid when !signaled && !timed_out
  int signal = 0;          // terminating signal, 0 if none
  bool timed_out = false;  // killed (SIGTERM, then SIGKILL) at the deadline
  std::string output;      // stdout + stderr, interleaved
  double seconds = 0.0;
  bool ok() const { return !timed_out && signal == 0 && exit_code == 0; }
};

inline subprocess_options timeout_options(std::chrono::milliseconds t) {
  subprocess_options o;
  o.timeout = t;
  return o;
}

// Fails only when the process cannot be started at all.
expected<subprocess_result> run_subprocess(const std::vector<std::string>& argv,
                                           const subprocess_options& options = {});

// Tools started on a thread inside a pausable_tools scope (the compile-ahead
// pool's compilers) can be stopped while timing runs on the same cores: a
// quiet_tools object stops every such tool's process group (SIGSTOP) until
// the last one ends (SIGCONT); one that starts meanwhile is stopped at once.
// Their time limits do not count the time they spent stopped.
class pausable_tools {
 public:
  pausable_tools();
  ~pausable_tools();
  pausable_tools(const pausable_tools&) = delete;
  pausable_tools& operator=(const pausable_tools&) = delete;

 private:
  bool before_;
};

class quiet_tools {
 public:
  explicit quiet_tools(bool active = true);
  ~quiet_tools();
  quiet_tools(const quiet_tools&) = delete;
  quiet_tools& operator=(const quiet_tools&) = delete;
  // How many pausable tools are running now (stopped or not).
  static size_t running();

 private:
  bool active_;
};

// Kills a process group: SIGTERM, a grace period, then SIGKILL; reaps `pid`.
// Returns the wait status.
int terminate_process_group(int pid, std::chrono::milliseconds grace);

}  // namespace kevolve
