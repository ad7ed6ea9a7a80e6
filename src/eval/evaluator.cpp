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
#include "eval/evaluator_parts.h"
#include "eval/generators.h"
#include "eval/roofline.h"
#include "eval/source_policy.h"
#include "eval/stats.h"
#include "eval/task_data.h"
#include "eval/worker_client.h"

namespace kevolve::eval {

using std::chrono::milliseconds;

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
    case call_outcome::kind::left_running:
      sv.result = status::suspicious;
      sv.reason = when + ": " + out.detail;
      break;
    case call_outcome::kind::ok: break;
  }
  return sv;
}

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
  const backend_descriptor& desc = e->backend_->descriptor();
  if (desc.traits.verify_only) e->options_.verify_only = true;
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
  // An operator may have neither a C++ reference (PyTorch in fp64 is it)
  // nor plain baselines (PyTorch is the yardstick).
  expected<compiled_kernel> none = compiled_kernel{};
  auto ref = op.torch_reference() ? none : compile_trusted(cpu, op.reference, {}, "reference");
  if (!ref) return tl::unexpected(ref.error());
  auto base = op.baseline.source.empty() ? none : compile_trusted(cpu, op.baseline.source, op.baseline.libraries, "baseline");
  if (!base) return tl::unexpected(base.error());
  auto timed_base = base;
  e->baseline_name_ = op.baseline.source.empty() ? "none (PyTorch only)" : op.baseline.name;
  const bool torch_yardstick = op.has_torch() && !desc.torch_device.empty() && options.fitness != "baseline" &&
                               options.torch_baselines.value_or(desc.torch_by_default);
  if (!desc.traits.host) {
    const auto it = op.baselines.find(desc.baseline_of);
    if ((it == op.baselines.end() || it->second.source.empty()) && torch_yardstick) {
      timed_base = none;
      e->baseline_name_ = "none (PyTorch only)";
    } else if (it == op.baselines.end() || it->second.source.empty()) {
      const backend_descriptor* of = find_backend(desc.baseline_of);
      const std::string legacy = of && !of->legacy_baseline_key.empty() ? " (or '" + of->legacy_baseline_key + "')" : "";
      return make_error(errc::invalid_input, op.file.string() + ": operator '" + op.name + "' has no 'baselines." +
                                                 desc.baseline_of + "'" + legacy + " {name, source, libraries}, which the " +
                                                 desc.name + " backend times candidates against");
    } else {
      const spec::baseline_spec& bs = it->second;
      timed_base = compile_trusted(*e->backend_, bs.source, bs.libraries, (desc.baseline_of + " baseline").c_str());
      if (!timed_base) return tl::unexpected(timed_base.error());
      e->baseline_name_ = bs.name;
    }
  }
  if (timed_base->library.empty() && !torch_yardstick && !options.verify_only && !desc.traits.verify_only)
    return make_error(errc::invalid_input, op.file.string() + ": operator '" + op.name + "' has no 'baselines." +
                                               desc.baseline_of + "' and PyTorch is not its yardstick here (" +
                                               (op.has_torch() ? "fitness: baseline, or no PyTorch on " + desc.name
                                                               : std::string("no 'torch'")) +
                                               "): nothing to time candidates against");
  // A backend that cannot run here (hip without an AMD GPU) only compiles:
  // no inputs, no reference, no workers.
  e->cannot_run_ = e->backend_->cannot_run_here();
  if (!e->cannot_run_.empty()) return e;
  // One input set per verification trial: an emulator has no cache to flush.
  if (e->backend_->deterministic_timer()) e->options_.rotation_bytes = 0;

  torch_reference_settings tref;
  tref.python = options.python.empty() ? python_executable() : std::filesystem::path(options.python);
  // The fp64 reference runs on the evaluator's GPU where PyTorch sees it.
  if (op.torch_reference() && desc.traits.uses_device && !desc.torch_device.empty() &&
      probe_torch(tref.python, desc.torch_device, true).empty())
    tref.device = desc.torch_device;
  auto data = task_data::create(e->op_, *e->variant_, e->options_, ref->library, base->library, timed_base->library,
                                *e->backend_, tref);
  if (!data) return tl::unexpected(data.error());
  e->data_ = std::move(*data);
  if (auto v = e->data_->validate_baseline(e->op_); !v) return tl::unexpected(v.error());
  if (options.validate_torch)
    if (auto v = e->data_->validate_torch(e->op_); !v) return tl::unexpected(v.error());
  e->configure_torch();
  if (auto f = e->choose_fitness(); !f) return tl::unexpected(f.error());
  e->configure_ncu();

  if (desc.traits.host && std::find(op.baseline.libraries.begin(), op.baseline.libraries.end(), "openblas") != op.baseline.libraries.end()) {
    const char* core = std::getenv("OPENBLAS_CORETYPE");
    e->baseline_name_ += core ? std::string(" [OPENBLAS_CORETYPE=") + core + "]" : " [OpenBLAS autodetected core]";
  }
  return e;
}

expected<verdict> evaluator::evaluate(const std::string& source, double profile_above) {
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
  run_totals totals;
  phase_clock spawn_clock(totals.phases, "start worker");
  auto cand = candidate_worker(k->library);
  if (!cand) return tl::unexpected(cand.error());
  spawn_clock.stop();

  double speedup_log_sum = 0;
  int timed = 0;
  v.fitness_basis = fitness_torch_ ? "torch" : "baseline";
  v.fitness_note = fitness_note_;
  v.torch_version = torch_version_;
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
      speedup_log_sum += std::log(sv.fitness_speedup);
      ++timed;
    }
    v.shapes.push_back(std::move(sv));
  }
  {
    phase_clock stop_clock(totals.phases, "stop worker");
    (*cand)->shutdown();
  }
  // Once this candidate's process is gone (nothing of it can reach the next
  // one's), the next candidate's worker starts while the verdict is finished.
  if (options_.prestart_worker && !spare_) {
    auto next = worker_client::start(candidate_worker_options(), {&data_->region_a()}, 1);
    if (next) spare_ = std::move(*next);
  }
  if (baseline_error_) return tl::unexpected(*baseline_error_);
  if (v.result == status::ok && timed > 0) {
    v.fitness = std::exp(speedup_log_sum / timed);
    // Counters only: never the status or fitness.
    if (profile_above <= 0 || v.fitness > profile_above * (1 + options_.ncu_min_gain))
      profile_with_ncu(k->library, v, totals);
  }
  if (options_.verify_only && v.result == status::ok)
    v.reason = std::string("verified only, never timed") +
               backend_->descriptor().verify_only_reason;
  v.overhead_phases = totals.phases;
  v.kernel_phases = totals.kernel_phases;
  // Report timed shapes first, as the operator lists them.
  std::stable_partition(v.shapes.begin(), v.shapes.end(), [](const shape_verdict& s) { return !s.holdout; });
  return finish(v, totals.kernel_seconds);
}

size_t evaluator::host_bytes() const { return data_ ? data_->host_bytes() : 0; }

worker_options evaluator::candidate_worker_options() const {
  return backend_->worker(data_->threads(), options_.sandbox,
                          data_->region_a().size() + options_.memory_limit_bytes + (uint64_t(1) << 30));
}

expected<std::unique_ptr<worker_client>> evaluator::candidate_worker(const std::filesystem::path& library) {
  if (spare_) {
    std::unique_ptr<worker_client> w = std::move(spare_);
    // A spare that died while it waited is replaced; its death is not the candidate's.
    if (w->still_running())
      if (auto r = w->load({library}); r) return w;
  }
  return worker_client::spawn(candidate_worker_options(), {&data_->region_a()}, {library});
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
  // On a deterministic timer (the emulator's cycle count) the trials on sets
  // 1..T-1 and the re-seeded set 0 are also the shape's timed calls (the data
  // the baseline is timed on): each is the kernel's first call on its data
  // (nothing it could have cached), with fresh poison and its outputs
  // checked, and its cycles are what a second call on the same set would
  // count.
  const int trials = std::max(1, options_.verify_trials);
  const bool timed_trials = backend_->deterministic_timer() && !sv.holdout && !options_.verify_only;
  std::vector<int64_t> trial_ns;
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
    const bool timed_trial = timed_trials && (reseed || (t >= 1 && t < ps.buf.num_sets));
    auto out = timed_trial ? cand.time(0, uint32_t(s), 1, options_.call_timeout) : cand.call(0, uint32_t(s), options_.call_timeout);
    totals.add_request(sv.holdout ? "verification trials (holdout shapes)" : "verification trials (timed shapes)", out.wall_seconds);
    if (!out.ok()) return failed_call(sv, out, when);
    if (timed_trial) trial_ns.insert(trial_ns.end(), out.ns.begin(), out.ns.end());
    if (timed_trial && reseed) {
      // the profile of the last timed call
      auto prof = cand.profile(options_.call_timeout);
      if (prof.ok()) {
        sv.profile = backend_->describe_profile(prof.ns, &sv.bottleneck);
        sv.metrics = backend_->profile_metrics(prof.ns);
      }
    }
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
  return time_shape(p, last, cand, sv, totals, std::move(trial_ns));
}

}  // namespace kevolve::eval
