// What all candidates of one task share: the resolved shapes, their inputs in
// shared memory (region A, with candidate outputs), the baseline's outputs
// (region B, never mapped by a candidate), the reference's scratch (region C)
// and cached reference results, plus the long-lived baseline and reference
// workers. Reference results are computed in their own process, from private
// copies of the inputs, so no candidate can reach them.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/error.h"
#include "eval/compare.h"
#include "eval/layout.h"
#include "eval/shared_region.h"
#include "eval/worker_client.h"
#include "spec/operator_spec.h"

namespace kevolve::eval {

struct evaluator_options;
class backend;

struct problem_state {
  spec::problem_instance inst;
  shape_buffers buf;                   // offsets in regions A and B
  reference_buffers ref;               // offsets in region C
  std::vector<size_t> c_guards;        // guard pages of region C for this shape
  std::vector<uint64_t> content_seed;  // seed whose inputs set s holds now (0: none)
  std::vector<uint64_t> checksum;      // per set, over all inputs
  // Per set: `bytes` with the operator's data symbols counted from the set's
  // inputs (empty: the operator has none, inst.bytes holds for every set).
  std::vector<double> set_bytes;
  // The traffic the roofline holds a call to: the median of set_bytes
  // (timed times are medians over the sets too), else inst.bytes.
  double roofline_bytes() const;
  // Set 0 alternates between two contents per candidate (the in-place
  // re-seed trial); copies of both spare regenerating them every time.
  struct snapshot {
    std::vector<char> bytes;
    uint64_t checksum = 0;
  };
  std::map<uint64_t, snapshot> set0_snapshots;
  // A candidate ran on these inputs and they have not all been checked since.
  bool tainted = false;
  bool baseline_is_reference = false;  // flops above reference_max_flops
};

struct reference_result {
  std::vector<std::vector<char>> outputs;
  std::vector<spec::dtype> types;
  double tol_scale = 1.0;  // 2 when the trusted baseline (or PyTorch in fp32) stands in for the reference
};

// Where an operator without a C++ reference computes it: its PyTorch
// version in a trusted process of its own (torch_process.h).
struct torch_reference_settings {
  std::filesystem::path python;
  std::string device = "cpu";  // cuda: on the evaluator's GPU
};

class task_data {
 public:
  // Empty libraries: the operator has none (no C++ reference: PyTorch is
  // the reference, by `torch_ref`; no timed baseline: PyTorch is the only
  // yardstick).
  static expected<std::unique_ptr<task_data>> create(const spec::operator_spec& op, const spec::variant& v,
                                                     const evaluator_options& options,
                                                     const std::filesystem::path& reference_lib,
                                                     const std::filesystem::path& baseline_lib,
                                                     const std::filesystem::path& timed_baseline_lib,
                                                     const backend& timed_backend,
                                                     const torch_reference_settings& torch_ref = {});
  ~task_data();

  size_t num_problems() const { return problems_.size(); }
  const problem_state& problem(size_t p) const { return problems_[p]; }
  const shared_region& region_a() const { return a_; }
  int threads() const { return threads_; }
  // Host memory this task holds: its regions, reference outputs and snapshots.
  size_t host_bytes() const;

  char* at_a(const buffer_ref& b) const { return a_.data() + b.offset; }
  char* at_b(const buffer_ref& b) const { return b_.data() + b.offset; }

  // Seeds and distributions of the verification trials.
  uint64_t set_seed(size_t p, int set) const;
  uint64_t reseed_seed(size_t p) const;

  // Before a candidate runs on problem `p`: if an earlier candidate ended
  // without the final check, checks every set now and regenerates damaged
  // ones. Marks the problem tainted until finish_candidate().
  expected<void> begin_candidate(size_t p);
  // After a candidate's calls on `p`: "" when every set is intact (and the
  // problem is clean again), else what was changed.
  std::string finish_candidate(size_t p);

  // Makes set `s` of problem `p` hold the inputs of `seed` (distribution
  // index `dist`), regenerating (or restoring a copy) when it holds something
  // else. Within a candidate's run, every call is followed by a check of the
  // set it used, and the run ends with a check of every set, so a set is
  // never checked before a call.
  expected<void> ensure_inputs(size_t p, int s, uint64_t seed, int dist);
  // set_bytes[s] from the inputs set s holds now (operators with data symbols)
  expected<void> count_set_bytes(size_t p, int s);
  // "" when the inputs of set s and their canaries are unchanged, else what changed.
  std::string check_inputs(size_t p, int s) const;
  // Fills outputs of set s with `poison` and their page tails with canaries.
  void poison_outputs(size_t p, int s, uint8_t poison);
  // "" when no output of set s was written past its end.
  std::string check_output_canaries(size_t p, int s) const;

  // Every output of set s against `ref`: the first failing output's result
  // (with `elements` set to its size), or the largest errors when all pass.
  struct output_check {
    compare_result result;
    int64_t elements = 0;
  };
  output_check compare_outputs(size_t p, int s, const reference_result& ref) const;
  // The same for the timed baseline's outputs of set s (region B): a timed
  // baseline that computes something else would skew every speedup.
  void poison_baseline_outputs(size_t p, int s, uint8_t poison);
  output_check compare_baseline_outputs(size_t p, int s, const reference_result& ref) const;
  // The same for outputs computed outside the workers (the PyTorch baselines):
  // one pointer per output, native dtype.
  output_check compare_outside_outputs(size_t p, const std::vector<const char*>& outs, const reference_result& ref) const;

  // The reference's outputs for the inputs set s holds now.
  expected<const reference_result*> reference(size_t p, int s);

  // SETUP payloads: candidate (region A only) and baseline worker.
  std::vector<char> candidate_setup(size_t p) const;
  expected<void> setup_baseline_worker(size_t p);
  worker_client& baseline_worker() { return *base_worker_; }
  bool has_timed_baseline() const { return base_worker_ != nullptr; }

  // `ops validate`: at every holdout shape, PyTorch's outputs twice (the
  // same bits, else the forward is non-deterministic), and where the
  // operator also has a C++ reference, the two against each other.
  expected<void> validate_torch(const spec::operator_spec& op);

  // Checks the baseline against the reference at the holdout shapes.
  expected<void> validate_baseline(const spec::operator_spec& op);

 private:
  task_data() = default;
  std::vector<uint64_t> guards(const region_plan& plan, uint32_t region) const;
  expected<void> setup_reference_worker(size_t p);
  // PyTorch's outputs for the inputs set s holds now: fp64 (the reference),
  // fp32 (the stand-in above reference_max_flops) or in the variant's own
  // dtypes (validation: the outputs' dtypes checked); `repeat` runs.
  enum class torch_precision { fp64, fp32, native };
  expected<reference_result> torch_outputs(size_t p, int s, torch_precision precision, int repeat, bool* deterministic);

  const evaluator_options* options_ = nullptr;
  const spec::operator_spec* op_ = nullptr;
  const spec::variant* variant_ = nullptr;
  int threads_ = 1;
  std::vector<problem_state> problems_;
  region_plan plan_a_, plan_b_, plan_c_;
  shared_region a_, b_, c_;
  std::unique_ptr<worker_client> base_worker_;
  std::unique_ptr<worker_client> ref_worker_;
  std::chrono::milliseconds base_setup_timeout_{0};  // GPU workers copy every set to the device
  long base_worker_problem_ = -1;
  long ref_worker_problem_ = -1;
  std::map<std::pair<size_t, uint64_t>, reference_result> ref_cache_;
  bool has_cpp_reference_ = false;
  torch_reference_settings torch_ref_;
  std::unique_ptr<class torch_process> torch_proc_;  // started at the first PyTorch reference
};

}  // namespace kevolve::eval
