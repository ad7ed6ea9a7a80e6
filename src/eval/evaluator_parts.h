// Pieces the evaluator's two halves share (evaluator.cpp: verification;
// evaluator_timing.cpp: timing and judging): the clock of the evaluator's own
// work, and a failed call as a verdict. Internal to src/eval.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "eval/evaluator.h"
#include "eval/verdict.h"
#include "eval/worker_client.h"

namespace kevolve::eval {

using clock_type = std::chrono::steady_clock;

inline double since(clock_type::time_point t) { return std::chrono::duration<double>(clock_type::now() - t).count(); }

inline double sum_seconds(const std::vector<int64_t>& ns) {
  double s = 0;
  for (int64_t v : ns) s += double(v) * 1e-9;
  return s;
}

// A failed call as a verdict.
shape_verdict failed_call(shape_verdict sv, const call_outcome& out, const std::string& when);

// A worker started under Nsight Compute and the directory of its log.
struct evaluator::ncu_worker {
  temp_dir dir;
  std::filesystem::path log_file;
  std::unique_ptr<worker_client> worker;  // destroyed (its process gone) before the directory
};

struct evaluator::run_totals {
  double kernel_seconds = 0.0;  // wall time of requests that ran kernels
  std::map<std::string, double> phases;  // the evaluator's own work, by phase
  std::map<std::string, double> kernel_phases;  // kernel_seconds by kind of request
  // A request's wall time, counted in kernel_seconds and under `kind`.
  void add_request(const char* kind, double wall_seconds) {
    kernel_seconds += wall_seconds;
    kernel_phases[kind] += wall_seconds;
  }
};

// Adds the time until destruction (or stop()) to one phase of the overhead.
class phase_clock {
 public:
  phase_clock(std::map<std::string, double>& sink, const char* name)
      : sink_(sink), name_(name), start_(clock_type::now()) {}
  ~phase_clock() { stop(); }
  void stop() {
    if (name_) sink_[name_] += since(start_);
    name_ = nullptr;
  }

 private:
  std::map<std::string, double>& sink_;
  const char* name_;
  clock_type::time_point start_;
};

}  // namespace kevolve::eval
