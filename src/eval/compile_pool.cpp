#include "eval/compile_pool.h"

#include <algorithm>
#include <memory>

#include "common/hash.h"
#include "common/log.h"
#include "common/subprocess.h"
#include "eval/backends/backend.h"

namespace kevolve::eval {
namespace {

constexpr size_t kRemembered = 4096;

std::string key_of(const std::string& backend, const std::string& source) { return backend + "|" + content_hash({source}); }

}  // namespace

compile_pool::compile_pool(int workers, std::chrono::seconds compile_timeout) : timeout_(compile_timeout) {
  for (int i = 0; i < std::max(1, workers); ++i) threads_.emplace_back([this] { run(); });
}

compile_pool::~compile_pool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
    queue_.clear();
  }
  wake_.notify_all();
  for (auto& t : threads_) t.join();
}

int compile_pool::default_workers(int cap) {
  const int cores = int(std::max(1u, std::thread::hardware_concurrency()));
  return std::clamp(cores - 1, 1, cap);
}

void compile_pool::submit(const std::string& backend, const std::string& source, const std::vector<std::string>& libraries) {
  const std::string key = key_of(backend, source);
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_ || finished_.count(key) || running_.count(key)) return;
    for (const auto& j : queue_)
      if (j.key == key) return;
    queue_.push_back(job{key, backend, source, libraries});
  }
  wake_.notify_one();
}

void compile_pool::settle(const std::string& backend, const std::string& source) {
  const std::string key = key_of(backend, source);
  std::unique_lock<std::mutex> lock(mu_);
  const auto it = std::find_if(queue_.begin(), queue_.end(), [&](const job& j) { return j.key == key; });
  if (it != queue_.end()) {
    queue_.erase(it);
    ++taken_back_;
  }
  done_.wait(lock, [&] { return !running_.count(key); });
}

uint64_t compile_pool::compiled() const {
  std::lock_guard<std::mutex> lock(mu_);
  return compiled_;
}

uint64_t compile_pool::taken_back() const {
  std::lock_guard<std::mutex> lock(mu_);
  return taken_back_;
}

void compile_pool::run() {
  pausable_tools pausable;  // this thread's compilers stop while a CPU evaluator times
  std::map<std::string, std::unique_ptr<backend>> backends;
  for (;;) {
    job j;
    {
      std::unique_lock<std::mutex> lock(mu_);
      wake_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (stopping_) return;
      j = std::move(queue_.front());
      queue_.pop_front();
      running_.insert(j.key);
    }
    auto& be = backends[j.backend];
    if (!be) {
      auto made = make_backend(j.backend, timeout_);
      if (made) be = std::move(*made);
      else log::warn("compile-ahead: no backend '{}': {}", j.backend, made.error().message);
    }
    if (be)
      if (auto c = check_statically(*be, j.source, j.libraries); !c)
        log::warn("compile-ahead ({}): {}", j.backend, c.error().message);  // the evaluator will say it again
    {
      std::lock_guard<std::mutex> lock(mu_);
      running_.erase(j.key);
      ++compiled_;
      finished_.insert(j.key);
      finished_order_.push_back(j.key);
      if (finished_order_.size() > kRemembered) {
        finished_.erase(finished_order_.front());
        finished_order_.pop_front();
      }
    }
    done_.notify_all();
  }
}

}  // namespace kevolve::eval
