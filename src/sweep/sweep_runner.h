// Runs a sweep on this process: for every task (operator × variant ×
// backend) a search engine grows a tree, the synthesizer writes children,
// the evaluator judges them, and the store is checkpointed on a period and
// at the end. Resumes from a store, and can start from the best kernels of
// earlier stores. A plain class: the actors of the distributed runtime wrap
// it later.
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "common/error.h"
#include "spec/hardware_profile.h"
#include "spec/sweep_spec.h"
#include "store/sweep_record.h"
#include "synth/synthesizer.h"

namespace kevolve::sweep {

struct run_options {
  std::filesystem::path store;                 // where checkpoints go
  bool resume = false;                         // continue the sweep in `store`
  std::vector<std::filesystem::path> seed_from;  // stores whose best kernels start each task
  // Polled after every evaluation: checkpoint now / checkpoint and stop.
  std::function<bool()> checkpoint_requested;
  std::function<bool()> stop_requested;
};

// What the runner reports as it goes (progress display, logs).
struct progress_event {
  size_t task = 0;       // index, 0-based
  size_t tasks = 0;
  std::string task_id;
  int64_t evaluations = 0;  // of this task
  int64_t max_evaluations = 0;
  double best_speedup = 0.0;
  double evals_per_second = 0.0;  // whole sweep
  std::string last;  // the last verdict, one line
};

class sweep_runner {
 public:
  sweep_runner(spec::sweep_spec spec, run_options options, spec::hardware_profile hardware,
               synth::synthesizer& synthesizer, std::function<void(const progress_event&)> on_progress);

  // The finished sweep; errors are operational (a broken operator, an
  // unreadable or incompatible store, a failed checkpoint).
  expected<store::sweep_record> run();
  // True when run() returned early because stop_requested() said so; the
  // store then holds everything done so far.
  bool interrupted() const { return interrupted_; }

 private:
  expected<void> prepare_record();
  expected<void> run_task(size_t index);
  expected<void> checkpoint();
  std::vector<std::string> seeds_for(const store::task_record& task) const;

  spec::sweep_spec spec_;
  run_options options_;
  spec::hardware_profile hardware_;
  synth::synthesizer& synth_;
  std::function<void(const progress_event&)> on_progress_;
  store::sweep_record record_;
  std::vector<store::sweep_record> seed_stores_;
  std::map<std::string, std::string> operator_source_;  // name -> catalog name or YAML path
  // The task being searched, whose engine a checkpoint saves.
  size_t current_task_ = 0;
  const search::search_engine* current_engine_ = nullptr;
  std::chrono::steady_clock::time_point started_;
  std::chrono::steady_clock::time_point last_checkpoint_;
  int64_t sweep_evaluations_ = 0;
  bool interrupted_ = false;
};

}  // namespace kevolve::sweep
