// The coordinator's plain core: the sweep's record, one search engine per
// active task, and the choice of what to evaluate next for a backend. It
// neither runs kernels nor waits for anything: the scheduler actor asks it for
// work, hands synthesis jobs to the synthesizer pool and requests to the
// dispatcher, and feeds verdicts back. Deterministic per task: a task's tree
// depends only on the seed and the sequence of its own verdicts.
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/error.h"
#include "spec/sweep_spec.h"
#include "store/sweep_record.h"
#include "sweep/work.h"
#include "synth/synthesizer.h"

namespace kevolve::search {
class search_engine;
}

namespace kevolve::sweep {

struct run_options {
  std::filesystem::path store;                   // where checkpoints go
  bool resume = false;                           // continue the sweep in `store`
  std::vector<std::filesystem::path> seed_from;  // stores whose best kernels start each task
};

// A child whose code must be written before it can be evaluated, or (with
// `note`) a skill note to ask for about an improved node.
struct synth_job {
  uint64_t id = 0;
  size_t task = 0;
  int64_t node = -1;
  synth::synthesis_request request;  // points into the scheduler's operators (stable)
  std::optional<synth::note_request> note;
};

// Either a request ready to evaluate, or a job for the synthesizer.
struct work {
  std::optional<eval_request> request;
  std::optional<synth_job> job;
  bool empty() const { return !request && !job; }
};

// What the progress display shows after a verdict.
struct progress_event {
  size_t task = 0;  // index, 0-based
  size_t tasks = 0;
  size_t tasks_done = 0;
  std::string task_id;
  int64_t evaluations = 0;  // of this task
  int64_t max_evaluations = 0;
  double best_speedup = 0.0;
  double evals_per_second = 0.0;  // whole sweep
  std::string last;               // the last verdict, one line
};

class scheduler {
 public:
  // Opens or creates the sweep's record (errors: an existing store without
  // --resume, an incompatible store, unreadable seed stores).
  static expected<std::unique_ptr<scheduler>> create(spec::sweep_spec spec, run_options options);
  ~scheduler();

  // Work for an evaluator of `backend`: a re-issued or seeded candidate, or a
  // new child of the least-served active task (by priority), activating the
  // next task when none can grow. Empty when nothing can start now.
  work next(const std::string& backend);
  // The synthesizer's output: a request, or nothing when it wrote nothing
  // (the child is then recorded as skipped).
  std::optional<eval_request> written(const synth_job& job, const synth::synthesis_result& out);
  // A verdict. Errors are operational (the evaluator could not load the
  // operator, ...) and end the sweep. In an llm sweep (with
  // llm.skill_note_chars > 0), a correct child that beats its task's best
  // (when its verdict reaches the tree) and grew from another node gets a
  // note job (take_note_jobs).
  expected<void> record(const eval_request& request, const eval_result& result);
  // Note jobs made by record() since the last call.
  std::vector<synth_job> take_note_jobs();
  // The synthesizer's note: its request is kept with the task's exchanges,
  // the note (accepted or refused) as a skill of the task.
  void noted(const synth_job& job, const synth::note_result& out);

  // Every task has stopped and nothing is in flight.
  bool finished() const;
  // Backends that still have tasks to run.
  std::vector<std::string> backends() const;
  // The record with every active engine saved into it: what a checkpoint writes.
  const store::sweep_record& snapshot();
  const progress_event& progress() const { return progress_; }
  const spec::sweep_spec& spec() const { return spec_; }
  const run_options& options() const { return options_; }
  // The --seed-from stores, in the order of options().seed_from.
  const std::vector<store::sweep_record>& seed_stores() const { return seed_stores_; }
  // Why no child of a task could be written ("" when one can): a task it
  // names ends when it starts, its stop reason saying why, instead of growing
  // children that are all skipped (kevolve run sets the builtin
  // synthesizer's check in a builtin sweep). Tasks with seed kernels or
  // earlier nodes still run.
  using unserved_check = std::function<std::string(const spec::operator_spec&, const spec::variant&, const std::string&)>;
  void set_unserved_check(unserved_check check) { unserved_ = std::move(check); }
  // Rank counters of this run, kept with the record (the store's `ranks`).
  void set_rank_stats(std::vector<rank_stats> stats);

 private:
  struct active_task;
  scheduler(spec::sweep_spec spec, run_options options);
  expected<void> prepare();
  active_task* activate(size_t index);
  work grow(active_task& t);
  eval_request request_for(active_task& t, int64_t node);
  void finish_if_done(active_task& t);
  void ask_for_notes(active_task& t);
  void note_progress(active_task& t, const std::string& last);
  double now(const active_task& t) const;

  spec::sweep_spec spec_;
  run_options options_;
  store::sweep_record record_;
  std::vector<store::sweep_record> seed_stores_;
  std::map<std::string, std::string> operator_source_;  // name -> catalog name or YAML path
  std::vector<std::unique_ptr<active_task>> active_;
  std::vector<bool> activated_;
  std::vector<synth_job> note_jobs_;
  unserved_check unserved_;
  uint64_t next_id_ = 1;
  int64_t sweep_evaluations_ = 0;
  std::chrono::steady_clock::time_point started_;
  progress_event progress_;
  int32_t session_ = 0;
};

}  // namespace kevolve::sweep
