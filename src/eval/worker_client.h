// The evaluator's side of a kevolve-worker process: spawns it with shared
// regions and kernel libraries, sends requests with deadlines, and turns
// every way a worker can fail (crash, exit, hang, forged reply) into an
// outcome. A failed worker is dead for good; callers start a new one.
#pragma once

#include <chrono>
#include <filesystem>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "common/error.h"
#include "common/fs.h"
#include "eval/worker_protocol.h"

namespace kevolve::eval {

class shared_region;

struct worker_options {
  std::filesystem::path executable;
  int threads = 1;
  uint64_t address_space_bytes = 0;  // 0: no RLIMIT_AS
  bool sandbox = true;
  std::chrono::milliseconds start_timeout{10000};
  std::vector<std::string> extra_args;  // after the usual four (a backend's worker may take more)
  // A program that starts the worker (its argv, absolute path first; the
  // worker's argv follows it): a profiler. It inherits the worker's fds.
  std::vector<std::string> launcher;
  // With `sandbox`: keep the user instead of switching to nobody (GPU workers
  // only; the seccomp filter and limits stay). Performance counters are
  // admin-only on most nodes, so the profiling pass needs it.
  bool keep_user = false;
};

struct call_outcome {
  enum class kind { ok, kernel_error, crashed, timeout, protocol_error, left_running };
  kind what = kind::ok;
  int rc = 0;                 // kernel_error: the kernel's return code
  std::vector<int64_t> ns;    // per-call times measured in the worker
  double wall_seconds = 0.0;  // measured here, around the whole request
  std::string detail;         // crashed/timeout/protocol_error: what happened
  bool ok() const { return what == kind::ok; }
};

class worker_client {
 public:
  // start, then load.
  static expected<std::unique_ptr<worker_client>> spawn(const worker_options& options,
                                                        const std::vector<const shared_region*>& regions,
                                                        const std::vector<std::filesystem::path>& libraries);
  // Starts a worker that will load `num_libraries` libraries: it maps the
  // regions, opens its device and waits, before its sandbox, for load().
  // A worker started ahead of its candidate takes CUDA context creation off
  // the candidate's time; it is still used for that one candidate only.
  static expected<std::unique_ptr<worker_client>> start(const worker_options& options,
                                                        const std::vector<const shared_region*>& regions,
                                                        size_t num_libraries);
  // Sends the libraries (once). A worker that died while it started shows
  // it at its first request.
  expected<void> load(const std::vector<std::filesystem::path>& libraries);
  ~worker_client();
  worker_client(const worker_client&) = delete;
  worker_client& operator=(const worker_client&) = delete;

  call_outcome setup(const std::vector<char>& payload, std::chrono::milliseconds timeout);
  call_outcome call(uint32_t lib, uint32_t set, std::chrono::milliseconds timeout);
  call_outcome time(uint32_t lib, uint32_t first_set, uint32_t reps, std::chrono::milliseconds timeout);
  // GPU workers: device copies of every set back into the shared regions.
  call_outcome download(std::chrono::milliseconds timeout);
  // Workers that profile their calls (mtia_emu): the last call's profile
  // words in `ns`.
  call_outcome profile(std::chrono::milliseconds timeout);

  bool alive() const { return pid_ > 0; }
  // Whether the process has not exited (reaps it if it has).
  bool still_running();
  int pid() const { return pid_; }
  // CPU time (user + system, all threads, live and exited) used so far;
  // clock-tick resolution (10 ms).
  double cpu_seconds() const;
  // CPU time of the threads alive now, with nanosecond resolution.
  double live_thread_cpu_seconds() const;
  // The last bytes the worker (or the kernel) printed.
  std::string output_tail(size_t max_bytes = 2000) const;
  // Asks the worker to quit without waiting: no more requests, and the
  // process tears down (unmapping its memory) while the caller works on.
  void release();
  // Asks the worker to quit and waits up to `timeout` for its process (a
  // launcher, when there is one) to exit: its exit status, or an error after
  // killing it. The caller then owns nothing but the client.
  expected<int> wait_exit(std::chrono::milliseconds timeout);
  // Asks the worker to quit (if not released); kills it if it does not
  // exit; reaps it; removes its files.
  void shutdown();

 private:
  worker_client() = default;
  call_outcome request(wire::op code, uint32_t lib, uint32_t first_set, uint32_t reps, const std::vector<char>& payload,
                       std::chrono::milliseconds timeout);
  call_outcome fail_dead(call_outcome out, int status);

  int pid_ = -1;
  int req_fd_ = -1;
  int rep_fd_ = -1;
  int lib_fd_ = -1;  // until load(): the socket the libraries go through
  size_t num_libs_ = 0;
  std::unique_ptr<temp_dir> dir_;
  std::filesystem::path log_path_;
  std::mt19937_64 nonce_rng_{std::random_device{}()};
};

// Human-readable description of a wait status of a worker that died.
std::string describe_worker_death(int status);

}  // namespace kevolve::eval
