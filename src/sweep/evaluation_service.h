// What an evaluator rank does with a request: load the task's operator,
// build (or reuse) the task's evaluator and turn the candidate into a result.
// A plain class behind an interface, so the runtime can be driven by other
// services (the benchmark's fixed-time one) and tested without kernels.
#pragma once

#include <chrono>

#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <vector>
#include <string>

#include "common/error.h"
#include "spec/hardware_profile.h"
#include "sweep/work.h"

namespace kevolve::eval {
class evaluator;
class compile_pool;
}

namespace kevolve::sweep {

class evaluation_service {
 public:
  virtual ~evaluation_service() = default;
  // Never throws; operational failures go into eval_result::error.
  virtual eval_result evaluate(const eval_request& request) = 0;
  // A request has arrived and waits for evaluate(): start what can run
  // ahead of it (the compile). Returns at once; thread-safe beside evaluate().
  virtual void prepare(const eval_request& request) { (void)request; }
};

// Several backends behind one service, chosen by the request's backend: in
// one process, the local evaluators take turns, so a CPU-bound backend (the
// emulator) never runs beside CPU timing.
class backend_router final : public evaluation_service {
 public:
  void add(const std::string& backend, std::shared_ptr<evaluation_service> service) { routes_[backend] = std::move(service); }
  eval_result evaluate(const eval_request& request) override;
  void prepare(const eval_request& request) override;

 private:
  std::map<std::string, std::shared_ptr<evaluation_service>> routes_;
};

// Whether this process can evaluate `backend` (compilers, devices); the
// error says what is missing.
expected<void> probe_backend(const std::string& backend);

// The real service: one eval::evaluator per task, the most recently used
// `cache_size` kept (each holds its task's inputs and reference outputs),
// fewer where together they would hold more than 40% of the node's memory.
// A scheduler keeps several tasks in flight per evaluator (queue_depth):
// evaluating them in turn must not rebuild an evaluator every time.
// With a compile pool, prepare() compiles waiting candidates ahead.
class task_evaluators final : public evaluation_service {
 public:
  task_evaluators(int rank, size_t cache_size = 4, std::shared_ptr<eval::compile_pool> pool = nullptr);
  ~task_evaluators() override;
  eval_result evaluate(const eval_request& request) override;
  void prepare(const eval_request& request) override;

 private:
  struct entry;
  expected<entry*> evaluator_for(const eval_request& request);
  eval_result evaluate_unguarded(const eval_request& request);
  eval_result thrown(const eval_request& request, std::chrono::steady_clock::time_point start, const std::string& what);

  int rank_;
  size_t cache_size_;
  std::list<std::unique_ptr<entry>> cache_;  // most recent first
  std::map<std::string, spec::hardware_profile> hardware_;  // by backend (and thread count where it matters)
  std::shared_ptr<eval::compile_pool> pool_;
  std::mutex libraries_mu_;  // prepare() runs on another thread than evaluate()
  std::map<std::string, std::vector<std::string>> libraries_;  // op source|hash -> allowed libraries
};

}  // namespace kevolve::sweep
