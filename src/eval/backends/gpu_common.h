// Pieces the GPU backends (cuda, hip) share: finding a compiler, the source
// rules runner and the launch-stream check (compiling and caching is
// compile_cache's, for every backend). Each
// backend keeps only what differs: its compiler flags, its resource report,
// its rules and its runtime allow-list.
#pragma once

#include <filesystem>
#include <regex>
#include <string>
#include <vector>

#include "common/error.h"
#include "eval/backends/backend.h"
#include "eval/source_policy.h"

namespace kevolve::eval {

// What the GPU backends (cuda, hip) have in common as backends: a worker
// process that owns the device and keeps device copies of the inputs, with
// one host thread per call.
class gpu_backend : public backend {
 public:
  bool keeps_device_copies() const override { return true; }
  // Pinned copies run at over 10 GB/s; 1 GB/s leaves room for pageable ones.
  double copy_allowance_seconds(double set_bytes) const override { return 3.0 * set_bytes / 1e9; }
  // Two memsets, two event records and a launch per call (about 15-30 us of
  // host time on an H200 node), one host thread.
  double host_seconds_per_call() const override { return 60e-6; }
  bool kernel_runs_on_host_threads() const override { return false; }

 protected:
  // The worker: no address-space limit (GPU runtimes reserve far more than
  // they use), a minute to create the device context.
  static worker_options device_worker(std::filesystem::path executable, int threads, bool sandbox);
};

}  // namespace kevolve::eval

namespace kevolve::eval::gpu {

std::string trim(std::string s);

// $ENV_VAR, else `name` on PATH, else `fallback`.
std::string find_tool(const char* env_var, const char* name, const std::string& fallback);

// A source rule: `library` non-null means allowed when the operator allows it.
struct source_rule {
  const char* name;
  std::regex re;
  const char* library;
};
// Appends a violation per match of every rule (comments and strings stripped).
void apply_rules(const std::string& code, const std::vector<source_rule>& rules, const std::vector<std::string>& allowed,
                 std::vector<policy_violation>& out);

// `kernel<<<grid, block, smem, stream>>>` launches with fewer than four
// configuration arguments, or a null stream, run on the default stream.
void scan_chevron_launches(const std::string& code, std::vector<policy_violation>& out);
// `hipLaunchKernelGGL(kernel, grid, block, smem, stream, ...)` with a null stream.
void scan_call_launches(const std::string& code, const std::string& function, int stream_arg,
                        std::vector<policy_violation>& out);

}  // namespace kevolve::eval::gpu
