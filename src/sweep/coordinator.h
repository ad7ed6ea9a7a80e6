// Rank 0's logic, without CAF or MPI: it greets the evaluator ranks, feeds
// them work through the dispatcher, sends children to the synthesizer pool,
// records verdicts in the scheduler, checkpoints on a period, handles late
// and silent ranks, and on a signal drains, checkpoints and shuts down within
// the grace period. Every entry point returns an `outbox` of what to send;
// the coordinator actor (actors/) only delivers it.
#pragma once

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/error.h"
#include "sweep/dispatcher.h"
#include "sweep/scheduler.h"
#include "sweep/work.h"

namespace kevolve::sweep {

struct outbox {
  std::vector<std::pair<int, eval_request>> evaluations;  // (rank, request)
  std::vector<synth_job> synthesis;
  std::vector<std::pair<int, rank_start>> starts;
  std::optional<store::sweep_record> checkpoint;  // write this
  uint64_t checkpoint_sequence = 0;
  std::vector<int> stops;      // ranks to stop: they answer with a bye
  std::vector<int> shutdowns;  // ranks to end: the final word
  bool finalize = true;        // every rank said bye: MPI can finish together
  std::vector<std::string> notices;  // for the user, one line each
  bool progress = false;             // a verdict was recorded: show progress
};

// How the run ended.
struct outcome {
  enum class kind { completed, interrupted, failed } how = kind::completed;
  error failure;  // when failed
  store::sweep_record record;
  std::string interrupted_by;  // "SIGTERM on rank 3"
  bool finalize = true;
};

class coordinator {
 public:
  // `remote_ranks`: evaluator ranks expected to say hello (1..N-1 under MPI).
  coordinator(std::unique_ptr<scheduler> s, std::set<int> remote_ranks);

  // Children to have written beyond what the evaluators can take now: for
  // slow synthesizers (LLM requests), so written children wait for free
  // evaluators rather than the other way round. 0 by default.
  void set_synthesis_ahead(int n) { synthesis_ahead_ = std::max(0, n); }
  // A local evaluator (one process, no launcher), ready at once.
  void add_local_evaluator(int id, const std::string& backend, double now);
  outbox start(double now);
  outbox on_hello(const rank_hello& h, double now);
  outbox on_written(const synth_job& job, const synth::synthesis_result& r, double now);
  // A skill note job's answer (jobs with `note`, sent after an improvement).
  outbox on_noted(const synth_job& job, const synth::note_result& r, double now);
  outbox on_result(const eval_result& r, double now);
  outbox on_heartbeat(const rank_stats& s, double now);
  outbox on_checkpoint_done(uint64_t sequence, const std::string& error, double now);
  // A signal on rank `rank` (0: here): drain, checkpoint, stop.
  outbox on_signal(int rank, int signo, double now);
  // A rank's message could not be read: it cannot take part.
  outbox on_codec_failure(int rank, const std::string& message, double now);
  // A stopped rank is alive and waits for the final word.
  outbox on_bye(int rank, double now);
  // Timers: deadlines, silence, checkpoint period, drain deadline.
  outbox on_tick(double now);

  bool done() const { return phase_ == phase::done; }
  const outcome& result() const { return outcome_; }
  const progress_event& progress() const { return scheduler_->progress(); }
  // Per-rank counters as the store keeps them.
  std::vector<rank_stats> rank_table(double now) const;

 private:
  enum class phase { greeting, running, draining, checkpointing, farewell, done };
  void fill(outbox& out, double now);
  std::string backends_without_a_rank() const;
  void request_checkpoint(outbox& out, double now);
  void final_checkpoint(outbox& out, double now);
  void begin_stop(outbox& out, double now, const std::string& why);
  void finish(outbox& out, double now);
  void conclude(outbox& out);
  void fail(outbox& out, double now, error e);
  void count(const eval_result& r);

  std::unique_ptr<scheduler> scheduler_;
  dispatcher dispatcher_;
  std::set<int> expected_;  // ranks that have not said hello yet
  std::set<int> remote_;    // every remote rank
  std::set<int> local_;     // evaluators in this process
  std::vector<std::string> hello_errors_;
  std::map<int, rank_stats> stats_;
  std::map<int, std::string> retired_why_;  // by rank: what retired it
  std::map<std::string, int> synthesizing_;  // per backend
  int synthesis_ahead_ = 0;
  int notes_pending_ = 0;  // note jobs sent, not answered
  std::map<uint64_t, eval_request> in_flight_;  // answered or not, by id: what was asked
  phase phase_ = phase::greeting;
  double started_ = 0;
  double last_checkpoint_ = 0;
  double stop_deadline_ = 0;  // drain until then
  bool checkpoint_running_ = false;
  uint64_t checkpoint_sequence_ = 0;
  uint64_t final_sequence_ = 0;
  bool final_pending_ = false;
  std::set<int> farewell_;  // stopped ranks that have not said bye
  bool farewell_complete_ = true;
  double farewell_until_ = 0;
  outcome outcome_;
};

}  // namespace kevolve::sweep
