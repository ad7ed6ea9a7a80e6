// The evaluator: turns a candidate's source into a verdict, following the
// six rules of ARCHITECTURE.md (compile, isolate, verify, time, refuse the
// impossible, profile). One evaluator serves one task (operator, variant,
// backend) and keeps what candidates share: inputs in shared memory, the
// reference's outputs, and the baseline and reference worker processes.
#pragma once

#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "common/error.h"
#include "eval/torch_baseline.h"
#include "eval/verdict.h"
#include "spec/hardware_profile.h"
#include "spec/operator_spec.h"

namespace kevolve::eval {

struct evaluator_options {
  int threads = 0;                       // 0: all hardware threads
  uint64_t seed = 1;                     // inputs of every trial derive from it
  std::vector<std::string> shapes;       // timed shapes to use; empty: all
  int verify_trials = 3;                 // fresh input sets per shape (+1 re-seeded in place)
  double rotation_bytes = 256.0 * (1 << 20);  // timing rotates over at least this much data
  int max_sets = 32;
  double time_budget_seconds = 0.4;      // per shape, candidate and baseline each
  int min_runs = 10;
  std::chrono::milliseconds call_timeout{10000};
  std::chrono::milliseconds reference_timeout{300000};
  std::chrono::seconds compile_timeout{120};
  uint64_t memory_limit_bytes = uint64_t(2) << 30;  // heap a kernel may use
  double roofline_slack = 0.5;           // faster than slack * floor is impossible
  bool sandbox = true;
  // PyTorch eager and torch.compile of the operator's `torch`, timed once
  // per (operator, variant, shape, device, torch version) and cached on
  // disk. Unset: on where the backend has a PyTorch (cpu, cuda); never on
  // mtia_emu.
  std::optional<bool> torch_baselines;
  std::optional<bool> torch_compile;     // unset: where the backend has it (cpu, cuda)
  // What the fitness is a speedup over: "torch" (the faster of eager and
  // torch.compile), "baseline" (the backend's plain baseline); empty: torch
  // where PyTorch is timed, else baseline (said once per task).
  std::string fitness;
  std::string python;                    // empty: python_executable()
  // Nsight Compute counters of verified candidates that are a new best (cuda
  // only; see backends/ncu_profiler.h and evaluate()), on the largest timed shape. Unset: on when ncu
  // is found; true: on, with a warning when it cannot be; false: off.
  std::optional<bool> ncu;
  // A new best gets the Nsight Compute pass only when it beats the best so
  // far by more than this fraction: smaller gains are within the H200's
  // run-to-run spread of the timing (1-2%), and the pass (2 s) cost 31% of
  // a sweep's GPU time when every new best paid for it.
  double ncu_min_gain = 0.03;
  // Verify at every shape, time none (fitness stays 0): correctness checks
  // on another device (the hip_on_cuda backend sets it).
  bool verify_only = false;
  // `ops validate`: PyTorch's outputs at the holdout shapes run twice (the
  // same bits) and, where there is a C++ reference too, checked against it.
  bool validate_torch = false;
  bool holdout_only = false;  // no timed shapes (validation)
  // After each candidate, start the next candidate's worker (process, mapped
  // regions, device context) so that the next evaluate() finds it ready and
  // only hands it the library (worker_client::start/load). Every candidate
  // still gets a fresh process of its own. `kevolve eval` (one candidate)
  // and `ops validate` turn it off.
  bool prestart_worker = true;
};

class task_data;
class backend;

// The overhead phase of a verdict that holds the PyTorch baselines' time:
// once per evaluator and shape, like building the evaluator, so a sweep does
// not count it against the task's clock.
inline constexpr const char* kTorchPhase = "PyTorch baselines (once per shape)";

class evaluator {
 public:
  // The backend is `hardware.backend` (empty: cpu).
  static expected<std::unique_ptr<evaluator>> create(const spec::operator_spec& op, const std::string& variant,
                                                     const evaluator_options& options,
                                                     const spec::hardware_profile& hardware);
  ~evaluator();

  // Operational failures (a broken operator, a missing compiler) are errors;
  // everything a candidate does wrong is a verdict. The Nsight Compute pass
  // (cuda) runs on a correct candidate whose fitness is above
  // `profile_above` by more than options.ncu_min_gain: in a sweep the
  // task's best so far, so only clear new bests pay for it; 0 (`kevolve
  // eval`): every correct candidate.
  expected<verdict> evaluate(const std::string& source, double profile_above = 0.0);

  const std::string& baseline_name() const { return baseline_name_; }
  // Host memory the evaluator holds for its task (inputs, references).
  size_t host_bytes() const;

 private:
  evaluator() = default;
  struct run_totals;
  // `last`: the candidate's worker is released after this shape's last call.
  shape_verdict evaluate_shape(size_t problem, bool last, class worker_client& cand, run_totals& totals);
  // `trial_ns`: on a deterministic timer, the verification trials' times.
  shape_verdict time_shape(size_t problem, bool last, class worker_client& cand, shape_verdict sv, run_totals& totals,
                           std::vector<int64_t> trial_ns);
  shape_verdict time_shape_once(size_t problem, bool last, class worker_client& cand, shape_verdict sv, run_totals& totals,
                                std::vector<int64_t> trial_ns);
  // After timing: checked set's outputs right, inputs untouched (else sv says why).
  bool check_left_behind(size_t problem, uint32_t checked_set, const char* what, shape_verdict& sv);
  // The timed baseline's outputs against the reference, once per shape.
  expected<void> check_timed_baseline(size_t problem, run_totals& totals);
  // The PyTorch baselines (torch_baseline.cpp): set up once, measured once
  // per timed shape on set 0's inputs, and reported in its verdicts.
  void configure_torch();
  void measure_torch_once(size_t problem);
  void attach_torch(size_t problem, shape_verdict& sv) const;
  // Nsight Compute (evaluator_profile.cpp): found once, then one profiled
  // call per verified candidate.
  void configure_ncu();
  void profile_with_ncu(const std::filesystem::path& library, verdict& v, run_totals& totals);
  // Speedup, roofline placement and the plausibility checks of timed shapes.
  shape_verdict judge_times(size_t problem, shape_verdict sv);
  void attach_ceiling(size_t problem, double call_bytes, shape_verdict& sv) const;

  spec::operator_spec op_;
  const spec::variant* variant_ = nullptr;
  evaluator_options options_;
  spec::hardware_profile hw_;
  std::unique_ptr<backend> backend_;  // compiles and runs candidates and the timed baseline
  std::unique_ptr<task_data> data_;
  std::string baseline_name_;
  std::string cannot_run_;  // non-empty: the backend cannot run kernels here; verdicts are compile_only
  std::map<size_t, std::vector<int64_t>> baseline_once_;  // baseline times per problem: deterministic timers, or fitness x PyTorch
  std::set<size_t> baseline_checked_;                      // problems whose timed baseline matched the reference
  std::optional<error> baseline_error_;                    // set when it did not: the evaluation is an error
  bool torch_on_ = false;                                  // the PyTorch baselines are measured
  std::string torch_note_;                                 // why they are not, when they were asked for
  torch_settings torch_;
  std::map<size_t, torch_times> torch_once_;               // per problem
  std::string torch_version_;                              // "2.11.0+cu130, cpu"
  bool fitness_torch_ = false;                             // fitness over PyTorch, not the baseline
  std::string fitness_note_;                               // why not, where it was the default
  // Decides fitness_torch_ once PyTorch is configured.
  expected<void> choose_fitness();
  std::string ncu_path_;                                   // empty: no profiling pass
  std::vector<std::string> ncu_metrics_;                   // the ncu metrics asked for
  std::string ncu_note_;                                   // why there is no profile (set: the pass is off)
  std::mt19937_64 rng_{std::random_device{}()};  // unpredictable to kernels; never affects a correct kernel's verdict
  // The worker started for the next candidate (prestart_worker), never used yet.
  std::unique_ptr<class worker_client> spare_;
  // A worker under Nsight Compute, started ahead (prestart_worker) for the
  // next profiling pass: ncu's own start-up is most of a pass.
  struct ncu_worker;
  std::unique_ptr<ncu_worker> ncu_spare_;
  expected<std::unique_ptr<ncu_worker>> start_ncu_worker();
  // A worker for one candidate: the spare when there is one, else a new one.
  expected<std::unique_ptr<class worker_client>> candidate_worker(const std::filesystem::path& library);
  // The options every candidate's worker gets.
  struct worker_options candidate_worker_options() const;
};

}  // namespace kevolve::eval
