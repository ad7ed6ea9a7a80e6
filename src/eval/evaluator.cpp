#include "eval/evaluator.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <thread>

#include "common/fs.h"
#include "common/hash.h"
#include "common/log.h"
#include "common/paths.h"
#include "eval/backends/backend.h"
#include "eval/backends/cpu_backend.h"
#include "eval/compare.h"
#include "eval/generators.h"
#include "eval/roofline.h"
#include "eval/source_policy.h"
#include "eval/stats.h"
#include "eval/task_data.h"
#include "eval/worker_client.h"

namespace kevolve::eval {
namespace {

using clock_type = std::chrono::steady_clock;

using std::chrono::milliseconds;

double since(clock_type::time_point t) { return std::chrono::duration<double>(clock_type::now() - t).count(); }

double sum_seconds(const std::vector<int64_t>& ns) {
  double s = 0;
  for (int64_t v : ns) s += double(v) * 1e-9;
  return s;
}

// A failed call as a verdict.
shape_verdict failed_call(shape_verdict sv, const call_outcome& out, const std::string& when) {
  switch (out.what) {
    case call_outcome::kind::kernel_error:
      sv.result = status::runtime_failed;
      sv.reason = when + ": the kernel returned " + std::to_string(out.rc);
      if (!out.detail.empty()) sv.reason += " (" + out.detail + ")";
      break;
    case call_outcome::kind::timeout:
      sv.result = status::timeout;
      sv.reason = when + ": " + out.detail;
      break;
    case call_outcome::kind::crashed:
      sv.result = status::crashed;
      sv.reason = when + ": " + out.detail;
      break;
    case call_outcome::kind::protocol_error:
      sv.result = status::suspicious;
      sv.reason = when + ": " + out.detail;
      break;
    case call_outcome::kind::ok: break;
  }
  return sv;
}

}  // namespace

struct evaluator::run_totals {
  double kernel_seconds = 0.0;  // wall time of requests that ran kernels
  std::map<std::string, double> phases;  // the evaluator's own work, by phase
};

namespace {
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
}  // namespace

evaluator::~evaluator() = default;

expected<std::unique_ptr<evaluator>> evaluator::create(const spec::operator_spec& op, const std::string& variant,
                                                       const evaluator_options& options,
                                                       const spec::hardware_profile& hardware) {
  std::unique_ptr<evaluator> e(new evaluator());
  e->op_ = op;
  e->options_ = options;
  e->hw_ = hardware;
  e->variant_ = variant.empty() ? &e->op_.variants.front() : e->op_.find_variant(variant);
  if (!e->variant_) {
    std::string known;
    for (const auto& v : op.variants) known += (known.empty() ? "" : ", ") + v.name;
    return make_error(errc::invalid_input, "operator '" + op.name + "' has no variant '" + variant + "' (variants: " + known + ")");
  }
  auto be = make_backend(hardware.backend, options.compile_timeout);
  if (!be) return tl::unexpected(be.error());
  e->backend_ = std::move(*be);
  if (std::string(e->backend_->name()) == "hip_on_cuda") e->options_.verify_only = true;
  // The reference (and the CPU baseline that stands in for it at large
  // shapes) always runs on the CPU.
  cpu_backend cpu(cache_root() / "compile" / "cpu", options.compile_timeout);

  auto compile_trusted = [&](backend& b, const std::filesystem::path& src, const std::vector<std::string>& libs,
                             const char* what) -> expected<compiled_kernel> {
    auto text = read_file(src);
    if (!text) return tl::unexpected(text.error());
    auto k = b.compile(*text, libs, src.string());
    if (!k) return k;
    if (!k->ok)
      return make_error(errc::invalid_input, src.string() + ": the " + std::string(what) + " of operator '" + op.name +
                                                 "' does not compile:\n" + k->report.diagnostics);
    return k;
  };
  auto ref = compile_trusted(cpu, op.reference, {}, "reference");
  if (!ref) return tl::unexpected(ref.error());
  auto base = compile_trusted(cpu, op.baseline.source, op.baseline.libraries, "baseline");
  if (!base) return tl::unexpected(base.error());
  auto timed_base = base;
  e->baseline_name_ = op.baseline.name;
  if (std::string(e->backend_->baseline_key()) != "baseline") {
    const std::string key = e->backend_->baseline_key();
    const spec::baseline_spec& bs = key == "cuda_baseline" ? op.cuda_baseline
                                    : key == "hip_baseline" ? op.hip_baseline
                                                            : op.mtia_baseline;
    if (bs.source.empty())
      return make_error(errc::invalid_input, op.file.string() + ": operator '" + op.name + "' has no '" + key +
                                                 "' {name, source, libraries}, which the " + e->backend_->name() +
                                                 " backend times candidates against");
    timed_base = compile_trusted(*e->backend_, bs.source, bs.libraries, (key.substr(0, key.find('_')) + " baseline").c_str());
    if (!timed_base) return tl::unexpected(timed_base.error());
    e->baseline_name_ = bs.name;
  }
  // A backend that cannot run here (hip without an AMD GPU) only compiles:
  // no inputs, no reference, no workers.
  e->cannot_run_ = e->backend_->cannot_run_here();
  if (!e->cannot_run_.empty()) return e;
  // One input set per verification trial: an emulator has no cache to flush.
  if (e->backend_->deterministic_timer()) e->options_.rotation_bytes = 0;

  auto data = task_data::create(e->op_, *e->variant_, e->options_, ref->library, base->library, timed_base->library,
                                *e->backend_);
  if (!data) return tl::unexpected(data.error());
  e->data_ = std::move(*data);
  if (auto v = e->data_->validate_baseline(e->op_); !v) return tl::unexpected(v.error());
  e->configure_torch();

  if (std::string(e->backend_->name()) == "cpu" && std::find(op.baseline.libraries.begin(), op.baseline.libraries.end(), "openblas") != op.baseline.libraries.end()) {
    const char* core = std::getenv("OPENBLAS_CORETYPE");
    e->baseline_name_ += core ? std::string(" [OPENBLAS_CORETYPE=") + core + "]" : " [OpenBLAS autodetected core]";
  }
  return e;
}

expected<verdict> evaluator::evaluate(const std::string& source) {
  const auto start = clock_type::now();
  verdict v;
  v.op = op_.name;
  v.variant = variant_->name;
  v.backend = backend_->name();
  v.baseline = baseline_name_;
  v.hardware = hw_.name + " (" + hw_.model +
               (backend_->keeps_device_copies() || backend_->deterministic_timer() || !data_
                    ? std::string(")")
                    : ", " + std::to_string(data_->threads()) + " threads)");
  v.peak_bandwidth_gbs = hw_.peak_bandwidth_gbs;
  v.peak_gflops = hw_.peak_gflops_fp32;
  v.kernel_hash = content_hash({source}).substr(0, 16);
  auto finish = [&](verdict& out, double kernel_s) -> verdict& {
    out.seconds = since(start);
    out.overhead_seconds = std::max(0.0, out.seconds - out.compile.seconds * (out.compile.cached ? 0 : 1) - kernel_s);
    return out;
  };

  // 1-3. The source policy, the compile (cached), the compiled form.
  auto st = check_statically(*backend_, source, op_.allowed_libraries);
  if (!st) return tl::unexpected(st.error());
  v.compile = st->kernel.report;
  if (st->result != status::ok) {
    v.result = st->result;
    v.reason = st->reason;
    return finish(v, 0);
  }
  if (!cannot_run_.empty()) {
    v.result = status::compile_only;
    v.reason = "compiled for " + v.compile.target + " and checked; not run: " + cannot_run_ +
               " (no correctness check, no timing, no speedup)";
    return finish(v, 0);
  }
  const compiled_kernel* k = &st->kernel;
  // 4. A fresh sandboxed worker for this candidate only.
  const worker_options wo = backend_->worker(data_->threads(), options_.sandbox,
                                             data_->region_a().size() + options_.memory_limit_bytes + (uint64_t(1) << 30));
  run_totals totals;
  phase_clock spawn_clock(totals.phases, "start worker");
  auto cand = worker_client::spawn(wo, {&data_->region_a()}, {k->library});
  if (!cand) return tl::unexpected(cand.error());
  spawn_clock.stop();

  double speedup_log_sum = 0;
  int timed = 0;
  v.result = status::ok;
  for (size_t p = 0; p < data_->num_problems(); ++p) {
    if (v.result != status::ok) {
      shape_verdict skipped;
      skipped.shape = data_->problem(p).inst.shape_name;
      skipped.holdout = data_->problem(p).inst.holdout;
      skipped.result = status::skipped;
      skipped.reason = "not evaluated after an earlier failure";
      v.shapes.push_back(skipped);
      continue;
    }
    shape_verdict sv = evaluate_shape(p, p + 1 == data_->num_problems(), **cand, totals);
    if (sv.result != status::ok) {
      v.result = sv.result;
      v.reason = "shape '" + sv.shape + "': " + sv.reason;
    } else if (!sv.holdout) {
      speedup_log_sum += std::log(sv.speedup);
      ++timed;
    }
    v.shapes.push_back(std::move(sv));
  }
  {
    phase_clock stop_clock(totals.phases, "stop worker");
    (*cand)->shutdown();
  }
  if (baseline_error_) return tl::unexpected(*baseline_error_);
  if (v.result == status::ok && timed > 0) v.fitness = std::exp(speedup_log_sum / timed);
  if (options_.verify_only && v.result == status::ok)
    v.reason = std::string("verified only, never timed") +
               (std::string(backend_->name()) == "hip_on_cuda"
                    ? ": correctness on another device (NVIDIA, through kevolve's HIP-on-CUDA header), not an AMD "
                      "performance figure"
                    : "");
  v.overhead_phases = totals.phases;
  // Report timed shapes first, as the operator lists them.
  std::stable_partition(v.shapes.begin(), v.shapes.end(), [](const shape_verdict& s) { return !s.holdout; });
  return finish(v, totals.kernel_seconds);
}

shape_verdict evaluator::evaluate_shape(size_t p, bool last, worker_client& cand, run_totals& totals) {
  const problem_state& ps = data_->problem(p);
  shape_verdict sv;
  sv.shape = ps.inst.shape_name;
  sv.holdout = ps.inst.holdout;
  sv.checked_against_baseline = ps.baseline_is_reference;
  sv.bytes = ps.inst.bytes;
  sv.flops = ps.inst.flops;
  phase_clock setup_clock(totals.phases, "load shape (incl. worker start-up)");
  // A GPU worker creates its context and copies every set to the device first.
  const milliseconds setup_timeout =
      backend_->keeps_device_copies() ? std::max(options_.call_timeout, milliseconds(60000)) : options_.call_timeout;
  auto setup = cand.setup(data_->candidate_setup(p), setup_timeout);
  if (!setup.ok()) return failed_call(sv, setup, "loading the kernel");
  setup_clock.stop();
  if (auto r = data_->begin_candidate(p); !r) {
    sv.result = status::skipped;
    sv.reason = r.error().message;
    return sv;
  }

  // Verification: fresh inputs per trial (sets 0..T-1, each another
  // distribution), then set 0 re-seeded in place (same addresses, new data).
  const int trials = std::max(1, options_.verify_trials);
  for (int t = 0; t <= trials; ++t) {
    const bool reseed = t == trials;
    const int s = reseed ? 0 : t % ps.buf.num_sets;
    const uint64_t seed = reseed ? data_->reseed_seed(p) : data_->set_seed(p, s);
    if (reseed) {
      // Set 0 is about to be overwritten: what the kernel did to it must show first.
      phase_clock check_clock(totals.phases, "check outputs and inputs");
      if (const std::string damage = data_->check_inputs(p, s); !damage.empty()) {
        sv.result = status::wrong_result;
        sv.reason = "the kernel " + damage;
        return sv;
      }
    }
    phase_clock prepare_clock(totals.phases, "prepare inputs and reference");
    if (auto r = data_->ensure_inputs(p, s, seed, reseed ? trials : t); !r) {
      sv.result = status::skipped;
      sv.reason = r.error().message;
      return sv;
    }
    auto ref = data_->reference(p, s);
    if (!ref) {
      sv.result = status::skipped;
      sv.reason = ref.error().message;
      return sv;
    }
    data_->poison_outputs(p, s, poison_byte(uint32_t(t)));
    prepare_clock.stop();
    const std::string when = "trial " + std::to_string(t + 1) + (reseed ? " (new data in the same buffers)" : "");
    auto out = cand.call(0, uint32_t(s), options_.call_timeout);
    totals.kernel_seconds += out.wall_seconds;
    if (!out.ok()) return failed_call(sv, out, when);
    if (last && sv.holdout && t == trials) cand.release();  // it exits while we check
    ++sv.trials;
    phase_clock check_clock(totals.phases, "check outputs and inputs");
    // Inputs are checked once per shape, after the last call (finish_candidate),
    // and here only to explain a wrong result.
    std::string damage = data_->check_output_canaries(p, s);
    const auto check = damage.empty() ? data_->compare_outputs(p, s, **ref) : task_data::output_check{};
    if (damage.empty() && !check.result.ok) damage = data_->check_inputs(p, s);
    if (!damage.empty()) {
      sv.result = status::wrong_result;
      sv.reason = when + ": the kernel " + damage;
      return sv;
    }
    sv.max_abs_error = std::max(sv.max_abs_error, check.result.max_abs_error);
    sv.max_error_ratio = std::max(sv.max_error_ratio, check.result.max_error_ratio);
    if (!check.result.ok) {
      sv.result = status::wrong_result;
      sv.reason = when + ": " + std::to_string(check.result.mismatches) + " of " + std::to_string(check.elements) +
                  " elements wrong; first " + check.result.first_mismatch +
                  (ps.baseline_is_reference ? " (checked against the trusted baseline)" : "");
      return sv;
    }
  }
  if (sv.holdout || options_.verify_only) {
    phase_clock check_clock(totals.phases, "check outputs and inputs");
    if (const std::string damage = data_->finish_candidate(p); !damage.empty()) {
      sv.result = status::wrong_result;
      sv.reason = "the kernel " + damage;
      return sv;
    }
    sv.result = status::ok;
    return sv;
  }
  return time_shape(p, last, cand, sv, totals);
}

shape_verdict evaluator::time_shape(size_t p, bool last, worker_client& cand, shape_verdict sv, run_totals& totals) {
  const problem_state& ps = data_->problem(p);
  if (auto r = data_->setup_baseline_worker(p); !r) {
    sv.result = status::skipped;
    sv.reason = r.error().message;
    return sv;
  }
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
  if (backend_->deterministic_timer()) return time_shape_once(p, last, cand, std::move(sv), totals);
  worker_client& base = data_->baseline_worker();
  const uint32_t sets = uint32_t(ps.buf.num_sets);
  const milliseconds timeout = options_.call_timeout;
  const int threads = data_->threads();
  std::vector<int64_t> cand_ns, base_ns;
  double cand_reported = 0.0;
  uint32_t cand_calls = 0;
  const double cpu_before = cand.cpu_seconds();

  // Warm-up: one pass over every set (page faults, caches, thread pools).
  auto wc = cand.time(0, 0, sets, timeout * sets);
  totals.kernel_seconds += wc.wall_seconds;
  if (!wc.ok()) return failed_call(sv, wc, "warm-up");
  cand_reported += sum_seconds(wc.ns);
  cand_calls += uint32_t(wc.ns.size());
  int cand_requests = 1;
  auto wb = base.time(0, 0, sets, timeout * sets);
  totals.kernel_seconds += wb.wall_seconds;
  if (!wb.ok()) {
    sv.result = status::skipped;
    sv.reason = "the baseline failed during warm-up: " + wb.detail;
    return sv;
  }
  const double est_c = std::max(summarize_ns(wc.ns).median_s, 1e-7);
  const double est_b = std::max(summarize_ns(wb.ns).median_s, 1e-7);
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
    if (r < rounds) {
      auto ob = base.time(0, next_b % sets, reps_b, timeout * reps_b);
      totals.kernel_seconds += ob.wall_seconds;
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
    totals.kernel_seconds += oc.wall_seconds;
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
  auto ref = data_->reference(p, int(checked_set));
  if (!ref) {
    sv.result = status::skipped;
    sv.reason = ref.error().message;
    return sv;
  }
  const auto check = data_->compare_outputs(p, int(checked_set), **ref);
  if (!check.result.ok) {
    sv.result = status::wrong_result;
    sv.reason = "outputs of the timed calls are wrong (right when verified, wrong when timed): " +
                check.result.first_mismatch;
    return sv;
  }
  if (const std::string damage = data_->finish_candidate(p); !damage.empty()) {
    sv.result = status::wrong_result;
    sv.reason = "while timed, the kernel " + damage;
    return sv;
  }

  sv.candidate = summarize_ns(cand_ns);
  sv.baseline = summarize_ns(base_ns);
  return judge_times(p, std::move(sv));
}

// Once per shape, on set 0 (verified, so its reference is known), with
// poisoned outputs: a timed baseline that computes something else would skew
// every speedup. On the CPU at shapes where the baseline stands in for the
// reference, it is the reference.
expected<void> evaluator::check_timed_baseline(size_t p, run_totals& totals) {
  if (baseline_checked_.count(p)) return {};
  const problem_state& ps = data_->problem(p);
  if (ps.baseline_is_reference && std::string(backend_->name()) == "cpu") return {};
  auto ref = data_->reference(p, 0);
  if (!ref) return tl::unexpected(ref.error());
  data_->poison_baseline_outputs(p, 0, 0xFF);
  auto out = data_->baseline_worker().call(0, 0, options_.call_timeout);
  totals.kernel_seconds += out.wall_seconds;
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

shape_verdict evaluator::judge_times(size_t p, shape_verdict sv) {
  const problem_state& ps = data_->problem(p);
  double call_bytes = double(ps.inst.workspace_bytes);
  for (const auto& t : ps.inst.inputs) call_bytes += double(t.bytes());
  for (const auto& t : ps.inst.outputs) call_bytes += double(t.bytes());
  const spec::hardware_profile hw = backend_->roofline_profile(hw_, call_bytes);
  sv.speedup = sv.baseline.median_s / sv.candidate.median_s;
  const roofline_point rp = place_on_roofline(hw, ps.inst.bytes, ps.inst.flops, sv.candidate.median_s);
  const roofline_point rb = place_on_roofline(hw, ps.inst.bytes, ps.inst.flops, sv.baseline.median_s);
  sv.achieved_gbs = rp.achieved_gbs;
  sv.achieved_gflops = rp.achieved_gflops;
  sv.roofline_fraction = rp.fraction;
  sv.baseline_roofline_fraction = rb.fraction;
  sv.roofline_gbs = hw.peak_bandwidth_gbs;
  attach_torch(p, sv);
  if (sv.bottleneck.empty()) sv.bottleneck = rp.bottleneck;
  const double floor_s = place_on_roofline(hw, ps.inst.bytes_floor, ps.inst.flops, sv.candidate.median_s).floor_seconds;
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
  if (sv.speedup > op_.max_speedup) {
    sv.result = status::suspicious;
    sv.reason = "implausible speedup over the baseline: " + std::to_string(sv.speedup) + "x (limit " +
                std::to_string(op_.max_speedup) + "x)";
    return sv;
  }
  sv.result = status::ok;
  return sv;
}

// A deterministic timer (an emulator's cycle count): one call per side on a
// set the kernel cannot predict, with fresh poison; its output is checked
// and its time is the shape's time. Wall and CPU time of the worker measure
// the emulator, not the kernel, so they are not compared.
shape_verdict evaluator::time_shape_once(size_t p, bool last, worker_client& cand, shape_verdict sv, run_totals& totals) {
  const problem_state& ps = data_->problem(p);
  const milliseconds timeout = options_.call_timeout;
  const uint32_t sets = uint32_t(ps.buf.num_sets);
  const uint32_t checked_set = uint32_t(rng_() % std::min<uint32_t>(sets, uint32_t(std::max(1, options_.verify_trials))));
  data_->poison_outputs(p, int(checked_set), poison_byte(checked_set + 7));
  auto oc = cand.time(0, checked_set, 1, timeout);
  totals.kernel_seconds += oc.wall_seconds;
  if (!oc.ok()) return failed_call(sv, oc, "timing");
  auto prof = cand.profile(timeout);
  if (prof.ok()) sv.profile = backend_->describe_profile(prof.ns, &sv.bottleneck);
  // The baseline's time is as deterministic: measured once per shape.
  auto known = baseline_once_.find(p);
  if (known == baseline_once_.end()) {
    auto ob = data_->baseline_worker().time(0, 0, 1, timeout);
    totals.kernel_seconds += ob.wall_seconds;
    if (!ob.ok()) {
      sv.result = status::skipped;
      sv.reason = "the baseline failed while timing: " + ob.detail;
      return sv;
    }
    known = baseline_once_.emplace(p, ob.ns).first;
  }
  if (last) cand.release();
  phase_clock check_clock(totals.phases, "check outputs and inputs");
  auto ref = data_->reference(p, int(checked_set));
  if (!ref) {
    sv.result = status::skipped;
    sv.reason = ref.error().message;
    return sv;
  }
  const auto check = data_->compare_outputs(p, int(checked_set), **ref);
  if (!check.result.ok) {
    sv.result = status::wrong_result;
    sv.reason = "outputs of the timed call are wrong (right when verified, wrong when timed): " +
                check.result.first_mismatch;
    return sv;
  }
  if (const std::string damage = data_->finish_candidate(p); !damage.empty()) {
    sv.result = status::wrong_result;
    sv.reason = "while timed, the kernel " + damage;
    return sv;
  }
  sv.candidate = summarize_ns(oc.ns);
  sv.baseline = summarize_ns(known->second);
  return judge_times(p, std::move(sv));
}

}  // namespace kevolve::eval
