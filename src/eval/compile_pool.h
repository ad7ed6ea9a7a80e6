// Compiles queued candidates ahead of the device: a pool of threads, each
// with its own backends, runs the static checks and the compile of a
// candidate (check_statically) into the compile cache, so that when its
// evaluation starts, the compile is a cache hit and the device worker only
// verifies and times. Nothing a job finds is a verdict: the evaluator
// repeats the same checks (against the cache) and decides. The compilers run
// as pausable tools (common/subprocess.h): a CPU evaluator stops them while
// it times kernels on the same cores.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace kevolve::eval {

class compile_pool {
 public:
  // `workers`: threads (at least 1).
  compile_pool(int workers, std::chrono::seconds compile_timeout);
  ~compile_pool();  // drops what is queued, waits for the running compiles
  compile_pool(const compile_pool&) = delete;
  compile_pool& operator=(const compile_pool&) = delete;

  // Queues a candidate (a source already queued or compiled is not queued again).
  void submit(const std::string& backend, const std::string& source, const std::vector<std::string>& libraries);
  // Returns once no job of this source is queued or running: a queued one is
  // taken back (the caller compiles it now), a running one is waited for.
  void settle(const std::string& backend, const std::string& source);

  int workers() const { return int(threads_.size()); }
  // Jobs finished by the pool, and those taken back by settle() before they ran.
  uint64_t compiled() const;
  uint64_t taken_back() const;

  // One worker per core but one (the device worker's), at most `cap`.
  static int default_workers(int cap = 8);

 private:
  struct job {
    std::string key, backend, source;
    std::vector<std::string> libraries;
  };
  void run();

  std::chrono::seconds timeout_;
  mutable std::mutex mu_;
  std::condition_variable wake_, done_;
  std::deque<job> queue_;
  std::set<std::string> running_;
  std::set<std::string> finished_;  // recent keys (bounded): not queued again
  std::deque<std::string> finished_order_;
  uint64_t compiled_ = 0, taken_back_ = 0;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace kevolve::eval
