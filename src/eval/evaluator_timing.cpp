// The evaluator's second half: timing a verified candidate against the timed
// baseline (interleaved rounds, or one call on a deterministic timer), the
// checks of hidden work, and the speedup and roofline judgement.
#include "eval/evaluator.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <numeric>
#include <random>
#include <thread>

#include "common/fs.h"
#include "common/hash.h"
#include "common/log.h"
#include "common/paths.h"
#include "common/subprocess.h"
#include "eval/backends/backend.h"
#include "eval/backends/cpu_backend.h"
#include "eval/compare.h"
#include "eval/evaluator_parts.h"
#include "eval/generators.h"
#include "eval/roofline.h"
#include "eval/source_policy.h"
#include "eval/stats.h"
#include "eval/task_data.h"
#include "eval/worker_client.h"

namespace kevolve::eval {

using std::chrono::milliseconds;

shape_verdict evaluator::time_shape(size_t p, bool last, worker_client& cand, shape_verdict sv, run_totals& totals,
                                    std::vector<int64_t> trial_ns) {
  const problem_state& ps = data_->problem(p);
  // Compiles running ahead (compile_pool) stop while kernels are timed on
  // this node's cores: PyTorch's, the baseline's and the candidate's.
  const quiet_tools quiet(backend_->kernel_runs_on_host_threads() && !backend_->deterministic_timer());
  if (!data_->has_timed_baseline()) {
    // PyTorch is the only yardstick: the candidate is timed alone.
    {
      phase_clock torch_clock(totals.phases, kTorchPhase);
      measure_torch_once(p);
    }
    if (backend_->deterministic_timer()) return time_shape_once(p, last, cand, std::move(sv), totals, std::move(trial_ns));
  } else if (auto r = data_->setup_baseline_worker(p); !r) {
    sv.result = status::skipped;
    sv.reason = r.error().message;
    return sv;
  }
  const bool has_base = data_->has_timed_baseline();
  // When the fitness is x PyTorch (itself timed once per shape), the plain
  // baseline only gives the "vs baseline" column: it is timed in the first
  // candidate's rounds and those times are kept for the task's later ones.
  // Where it is the fitness, it is timed beside every candidate (interleaved
  // rounds: drift of the machine affects both sides alike).
  const auto base_known = fitness_torch_ ? baseline_once_.find(p) : baseline_once_.end();
  const bool time_base = has_base && base_known == baseline_once_.end();
  if (has_base) {
    if (auto b = check_timed_baseline(p, totals); !b) {
      baseline_error_ = b.error();
      sv.result = status::skipped;
      sv.reason = b.error().message;
      return sv;
    }
    {
      phase_clock torch_clock(totals.phases, kTorchPhase);
      measure_torch_once(p);
    }
    if (backend_->deterministic_timer()) return time_shape_once(p, last, cand, std::move(sv), totals, std::move(trial_ns));
  }
  const uint32_t sets = uint32_t(ps.buf.num_sets);
  const milliseconds timeout = options_.call_timeout;
  const int threads = data_->threads();
  std::vector<int64_t> cand_ns, base_ns;
  double cand_reported = 0.0;
  uint32_t cand_calls = 0;
  const double cpu_before = cand.cpu_seconds();

  // Warm-up: one pass over every set (page faults, caches, thread pools).
  auto wc = cand.time(0, 0, sets, timeout * sets);
  totals.add_request("timing the candidate (warm-up)", wc.wall_seconds);
  if (!wc.ok()) return failed_call(sv, wc, "warm-up");
  cand_reported += sum_seconds(wc.ns);
  cand_calls += uint32_t(wc.ns.size());
  int cand_requests = 1;
  double est_b = 1e-7;
  if (time_base) {
    auto wb = data_->baseline_worker().time(0, 0, sets, timeout * sets);
    totals.add_request("timing the baseline", wb.wall_seconds);
    if (!wb.ok()) {
      sv.result = status::skipped;
      sv.reason = "the baseline failed during warm-up: " + wb.detail;
      return sv;
    }
    est_b = std::max(summarize_ns(wb.ns).median_s, 1e-7);
  }
  const double est_c = std::max(summarize_ns(wc.ns).median_s, 1e-7);
  const int rounds = 3;
  auto reps_for = [&](double est) {
    const double per_round = options_.time_budget_seconds / rounds;
    return uint32_t(std::clamp(per_round / est, double(std::max(1, options_.min_runs / rounds)), 100000.0));
  };
  const uint32_t reps_c = reps_for(est_c), reps_b = reps_for(est_b);
  const double ws_poison_s = double(ps.inst.workspace_bytes) / 5e9;  // worker's memset per call
  double set_bytes = 0;
  for (const auto& t : ps.inst.inputs) set_bytes += double(t.bytes());
  for (const auto& t : ps.inst.outputs) set_bytes += double(t.bytes());

  // Interleaved rounds: baseline batch, candidate batch. The candidate's last
  // batch starts at set 0 with freshly poisoned outputs, so what it leaves
  // behind is checked below.
  uint32_t next_c = 0, next_b = 0;
  // A set whose reference is known (it was verified), drawn per candidate.
  const uint32_t checked_set = uint32_t(rng_() % std::min<uint32_t>(sets, uint32_t(options_.verify_trials)));
  for (int r = 0; r <= rounds; ++r) {
    if (r < rounds && time_base) {
      auto ob = data_->baseline_worker().time(0, next_b % sets, reps_b, timeout * reps_b);
      totals.add_request("timing the baseline", ob.wall_seconds);
      if (!ob.ok()) {
        sv.result = status::skipped;
        sv.reason = "the baseline failed while timing: " + ob.detail;
        return sv;
      }
      base_ns.insert(base_ns.end(), ob.ns.begin(), ob.ns.end());
      next_b += reps_b;
    }
    const bool final_batch = r == rounds;
    uint32_t reps = reps_c;
    uint32_t first = next_c % sets;
    if (final_batch) {
      // One call on a set the kernel cannot predict, with fresh poison: its
      // output is checked against the reference below.
      first = checked_set;
      reps = 1;
      data_->poison_outputs(p, int(first), poison_byte(first + 1));
    }
    auto oc = cand.time(0, first, reps, timeout * reps);
    totals.add_request(final_batch ? "timing the candidate (checked last call)" : "timing the candidate (rounds)", oc.wall_seconds);
    if (!oc.ok()) return failed_call(sv, oc, "timing");
    const double reported = sum_seconds(oc.ns);
    // The worker's clock against ours: calls cannot take less than they took.
    // Slack for a busy machine: the worker may be descheduled between calls.
    const double allowed_gap =
        reported + 0.02 + double(reps) * (ws_poison_s + 20e-6) + backend_->copy_allowance_seconds(set_bytes);
    if (oc.wall_seconds > 2.0 * allowed_gap) {
      sv.result = status::suspicious;
      sv.reason = "timed calls reported " + std::to_string(reported * 1e3) + " ms but took " +
                  std::to_string(oc.wall_seconds * 1e3) +
                  " ms of wall time: work hidden from the timer, or a tampered timer";
      return sv;
    }
    cand_reported += reported;
    cand_calls += uint32_t(oc.ns.size());
    ++cand_requests;
    cand_ns.insert(cand_ns.end(), oc.ns.begin(), oc.ns.end());
    next_c += reps;
  }

  // Hidden work: no CPU use after the last call returned, and no more CPU in
  // total than the timed calls can account for.
  const double cpu_after = cand.cpu_seconds();
  phase_clock idle_clock(totals.phases, "idle check");
  const double live_before = cand.live_thread_cpu_seconds();
  ::usleep(5000);
  const double cpu_idle = cand.live_thread_cpu_seconds() - live_before;
  if (cpu_idle > 0.0025) {
    sv.result = status::suspicious;
    sv.reason = "the kernel's process kept computing after its calls returned (" + std::to_string(cpu_idle * 1e3) +
                " ms of CPU in 5 ms of idle time): work hidden from the timer";
    return sv;
  }
  const double cpu_used = cpu_after - cpu_before;
  // A GPU worker also copies one input set to the device and one back per
  // timed request (pageable memory: the host CPU does the staging).
  const double host_threads = backend_->kernel_runs_on_host_threads() ? threads : 1.0;
  const double cpu_bound =
      host_threads * (cand_reported + cand_calls * (ws_poison_s + backend_->host_seconds_per_call())) * 1.25 +
      cand_requests * backend_->copy_allowance_seconds(set_bytes) + 0.03;
  if (cpu_used > cpu_bound) {
    sv.result = status::suspicious;
    sv.reason = "the kernel's process used " + std::to_string(cpu_used * 1e3) + " ms of CPU while its timed calls took " +
                std::to_string(cand_reported * 1e3) + " ms in " + std::to_string(cand_calls) + " calls on " +
                std::to_string(int(host_threads)) + " host threads: work hidden from the timer";
    return sv;
  }

  idle_clock.stop();
  if (backend_->keeps_device_copies()) {
    // Inputs and outputs as the device holds them, for the checks below.
    phase_clock copy_clock(totals.phases, "copy device buffers back");
    auto d = cand.download(timeout * sets);
    if (!d.ok()) return failed_call(sv, d, "copying device buffers back");
  }
  if (last) cand.release();  // it exits while we check
  phase_clock check_clock(totals.phases, "check outputs and inputs");
  // What the timed calls left behind must still be right, and the inputs untouched.
  if (!check_left_behind(p, checked_set, "outputs of the timed calls", sv)) return sv;

  if (!time_base && has_base) base_ns = base_known->second;
  if (time_base && fitness_torch_) baseline_once_.emplace(p, base_ns);
  sv.candidate = summarize_ns(cand_ns);
  sv.baseline = base_ns.empty() ? timing_stats{} : summarize_ns(base_ns);
  return judge_times(p, std::move(sv));
}

// Once per shape, on set 0 (verified, so its reference is known), with
// poisoned outputs: a timed baseline that computes something else would skew
// every speedup. On the CPU at shapes where the baseline stands in for the
// reference, it is the reference.
expected<void> evaluator::check_timed_baseline(size_t p, run_totals& totals) {
  if (baseline_checked_.count(p)) return {};
  const problem_state& ps = data_->problem(p);
  if (ps.baseline_is_reference && backend_->descriptor().traits.host) return {};
  auto ref = data_->reference(p, 0);
  if (!ref) return tl::unexpected(ref.error());
  data_->poison_baseline_outputs(p, 0, 0xFF);
  auto out = data_->baseline_worker().call(0, 0, options_.call_timeout);
  totals.add_request("checking the baseline", out.wall_seconds);
  const std::string what = op_.file.string() + ": the timed baseline of operator '" + op_.name + "' (" + baseline_name_ + ")";
  if (!out.ok()) return make_error(errc::invalid_input, what + " failed at shape '" + ps.inst.shape_name + "': " + out.detail);
  const auto check = data_->compare_baseline_outputs(p, 0, **ref);
  if (!check.result.ok)
    return make_error(errc::invalid_input, what + " disagrees with the reference at shape '" + ps.inst.shape_name + "': " +
                                               std::to_string(check.result.mismatches) + " of " +
                                               std::to_string(check.elements) + " elements wrong; first " +
                                               check.result.first_mismatch);
  baseline_checked_.insert(p);
  return {};
}

// After timing: the outputs of the checked set against the reference, and
// the inputs untouched. False (with sv's verdict set) when either failed.
bool evaluator::check_left_behind(size_t p, uint32_t checked_set, const char* what, shape_verdict& sv) {
  auto ref = data_->reference(p, int(checked_set));
  if (!ref) {
    sv.result = status::skipped;
    sv.reason = ref.error().message;
    return false;
  }
  const auto check = data_->compare_outputs(p, int(checked_set), **ref);
  if (!check.result.ok) {
    sv.result = status::wrong_result;
    sv.reason = std::string(what) + " are wrong (right when verified, wrong when timed): " + check.result.first_mismatch;
    return false;
  }
  if (const std::string damage = data_->finish_candidate(p); !damage.empty()) {
    sv.result = status::wrong_result;
    sv.reason = "while timed, the kernel " + damage;
    return false;
  }
  return true;
}

// The attainable ceiling beside the roofline (the guard below stays on the
// roofline floor): what the operator asks of the device at this shape.
void evaluator::attach_ceiling(size_t p, double call_bytes, shape_verdict& sv) const {
  const problem_state& ps = data_->problem(p);
  ceiling_work w;
  w.bytes = ps.roofline_bytes();
  w.flops = ps.inst.flops;
  w.call_bytes = call_bytes;
  w.int_passes = ps.inst.int_passes;
  // The tightest tolerance of the float outputs decides whether fp32
  // products may run as one bf16 product; with none (integer outputs:
  // compares, hashes) no product needs the split.
  w.rtol = 1.0;
  for (const auto& t : ps.inst.inputs)
    if (spec::is_float(t.type)) w.float_bits = std::max(w.float_bits, int(spec::dtype_size(t.type) * 8));
  for (const auto& t : ps.inst.outputs) {
    if (!spec::is_float(t.type)) continue;
    const auto tol = op_.tolerances.find(t.type);
    w.rtol = std::min(w.rtol, tol == op_.tolerances.end() ? 0.0 : tol->second.rtol);
  }
  const ceiling c = backend_->attainable(w);
  if (!(c.seconds > 0) || !(sv.candidate.median_s > 0)) return;
  sv.attainable_fraction = c.seconds / sv.candidate.median_s;
  sv.bound = c.bound;
}

shape_verdict evaluator::judge_times(size_t p, shape_verdict sv) {
  const problem_state& ps = data_->problem(p);
  double call_bytes = double(ps.inst.workspace_bytes);
  for (const auto& t : ps.inst.inputs) call_bytes += double(t.bytes());
  for (const auto& t : ps.inst.outputs) call_bytes += double(t.bytes());
  const spec::hardware_profile hw = backend_->roofline_profile(hw_, call_bytes);
  sv.speedup = sv.baseline.runs > 0 ? sv.baseline.median_s / sv.candidate.median_s : 0.0;
  const double bytes = ps.roofline_bytes();
  sv.bytes = bytes;
  const roofline_point rp = place_on_roofline(hw, bytes, ps.inst.flops, sv.candidate.median_s);
  const roofline_point rb = place_on_roofline(hw, bytes, ps.inst.flops, sv.baseline.median_s);
  sv.achieved_gbs = rp.achieved_gbs;
  sv.achieved_gflops = rp.achieved_gflops;
  sv.roofline_fraction = rp.fraction;
  sv.baseline_roofline_fraction = rb.fraction;
  sv.roofline_gbs = hw.peak_bandwidth_gbs;
  attach_ceiling(p, call_bytes, sv);
  attach_torch(p, sv);
  sv.fitness_speedup = fitness_torch_ ? sv.torch_speedup() : sv.speedup;
  if (sv.bottleneck.empty()) sv.bottleneck = rp.bottleneck;
  // "Physically possible" is bounded by the fastest arithmetic the device
  // has: the tensor cores' measured rate where known (a 16-bit GEMM runs far
  // above the FP32 FMA rate).
  spec::hardware_profile fastest = hw;
  fastest.peak_gflops_fp32 = std::max(hw.peak_gflops_fp32, hw.peak_gflops_matrix);
  // Timed data the input sets could not rotate past the caches (their count
  // capped below rotation_bytes: a small shape) may be read from the caches
  // all along: its floor is the caches' rate where the profile has it (cpu),
  // or an honest reduction of a small tensor would be "impossible".
  if (call_bytes * double(ps.buf.num_sets) < options_.rotation_bytes && hw.cache_bandwidth_gbs > hw.peak_bandwidth_gbs)
    fastest.peak_bandwidth_gbs = hw.cache_bandwidth_gbs;
  const double floor_s =
      place_on_roofline(fastest, ps.inst.bytes_floor, ps.inst.flops, sv.candidate.median_s).floor_seconds;
  const double floor_fraction = floor_s / sv.candidate.median_s;
  if (floor_fraction > 1.05 && floor_fraction * options_.roofline_slack <= 1.0)
    log::warn("{} at shape '{}' ran at {:.0f}% of the measured roofline: the hardware profile ({:.1f} GB/s, {:.1f} GFLOP/s) "
              "looks low; measure it again on an idle machine with 'kevolve doctor --remeasure'",
              op_.name, ps.inst.shape_name, floor_fraction * 100, hw.peak_bandwidth_gbs, hw.peak_gflops_fp32);
  if (sv.candidate.median_s < options_.roofline_slack * floor_s) {
    sv.result = status::suspicious;
    sv.reason = "faster than physically possible: median " + std::to_string(sv.candidate.median_s * 1e6) +
                " us against a roofline floor of " + std::to_string(floor_s * 1e6) + " us";
    return sv;
  }
  if (fitness_torch_ && sv.fitness_speedup <= 0) {
    // The yardstick is broken (a wrong or failing `torch`): an error of the
    // operator, not of the candidate.
    sv.result = status::skipped;
    sv.reason = "PyTorch could not be timed at this shape (eager: " + sv.torch_eager.note + "; compile: " +
                (sv.torch_compile.note.empty() ? std::string("off") : sv.torch_compile.note) +
                "), and the fitness is a speedup over it";
    baseline_error_ = error{errc::invalid_input, op_.file.string() + ": operator '" + op_.name + "' at shape '" +
                                                     ps.inst.shape_name + "': " + sv.reason +
                                                     " (fix its 'torch', or use 'fitness: baseline')"};
    return sv;
  }
  if (sv.speedup > op_.max_speedup || (sv.baseline.runs == 0 && sv.fitness_speedup > op_.max_speedup)) {
    sv.result = status::suspicious;
    sv.reason = std::string("implausible speedup over the ") + (sv.baseline.runs ? "baseline: " : "PyTorch: ") +
                std::to_string(sv.baseline.runs ? sv.speedup : sv.fitness_speedup) + "x (limit " +
                std::to_string(op_.max_speedup) + "x)";
    return sv;
  }
  sv.result = status::ok;
  return sv;
}

// A deterministic timer (an emulator's cycle count): one call per side on
// every verification set (at most verify_trials of them), each with fresh
// poison and its outputs checked; the shape's time is the median. The
// candidate's calls are its verification trials (evaluate_shape), so it is
// not run again here. A data-dependent kernel (gathers,
// segments) takes different times on different sets, so one drawn set would
// make the verdict depend on the draw, and the baseline is timed on the same
// sets. Wall and CPU time of the worker measure the emulator, not the kernel,
// so they are not compared.
shape_verdict evaluator::time_shape_once(size_t p, bool last, worker_client& cand, shape_verdict sv, run_totals& totals,
                                         std::vector<int64_t> trial_ns) {
  const problem_state& ps = data_->problem(p);
  const milliseconds timeout = options_.call_timeout;
  const uint32_t n_sets = std::min<uint32_t>(uint32_t(ps.buf.num_sets), uint32_t(std::max(1, options_.verify_trials)));
  const std::vector<int64_t> ns = std::move(trial_ns);
  if (ns.size() != n_sets) {
    sv.result = status::suspicious;
    sv.reason = "the worker reported " + std::to_string(ns.size()) + " times for " + std::to_string(n_sets) + " timed calls";
    return sv;
  }
  // The baseline's times are as deterministic: measured once per shape.
  auto known = baseline_once_.find(p);
  if (known == baseline_once_.end() && !data_->has_timed_baseline()) known = baseline_once_.emplace(p, std::vector<int64_t>{}).first;
  if (known == baseline_once_.end()) {
    // one request: its calls run on sets 0 .. n_sets - 1 in turn
    auto ob = data_->baseline_worker().time(0, 0, n_sets, timeout * n_sets);
    totals.add_request("timing the baseline", ob.wall_seconds);
    if (!ob.ok()) {
      sv.result = status::skipped;
      sv.reason = "the baseline failed while timing: " + ob.detail;
      return sv;
    }
    known = baseline_once_.emplace(p, ob.ns).first;
  }
  if (last) cand.release();
  phase_clock check_clock(totals.phases, "check outputs and inputs");
  // Each timed call's outputs were checked as a trial; the inputs of every set now.
  if (const std::string damage = data_->finish_candidate(p); !damage.empty()) {
    sv.result = status::wrong_result;
    sv.reason = "the kernel " + damage;
    return sv;
  }
  sv.candidate = summarize_ns(ns);
  sv.baseline = known->second.empty() ? timing_stats{} : summarize_ns(known->second);
  return judge_times(p, std::move(sv));
}

}  // namespace kevolve::eval
