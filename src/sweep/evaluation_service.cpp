#include "sweep/evaluation_service.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <thread>

#include <unistd.h>

#include "common/log.h"
#include "eval/backends/backend.h"
#include "eval/compile_pool.h"
#include "eval/evaluator.h"
#include "spec/operator_loader.h"
#include "spec/shape_points.h"

namespace kevolve::sweep {

expected<void> probe_backend(const std::string& backend) {
  const eval::backend_descriptor* d = eval::find_backend(backend);
  if (!d || !d->traits.sweepable)
    return make_error(errc::toolchain_error, "kevolve cannot evaluate backend '" + backend + "' yet (available: " +
                                                 eval::backend_names([](const auto& x) { return x.traits.sweepable; }) + ")");
  return eval::backend_usable(*d);
}

eval_result backend_router::evaluate(const eval_request& request) {
  const auto it = routes_.find(request.backend);
  if (it != routes_.end()) return it->second->evaluate(request);
  eval_result out;
  out.id = request.id;
  out.error = "no local evaluator for backend '" + request.backend + "'";
  return out;
}

void backend_router::prepare(const eval_request& request) {
  if (const auto it = routes_.find(request.backend); it != routes_.end()) it->second->prepare(request);
}

struct task_evaluators::entry {
  std::string key;  // task id + operator hash + settings
  std::unique_ptr<eval::evaluator> evaluator;
  // The best fitness this evaluator has returned for the task: with several
  // candidates of a task in flight, a request's best_fitness is the best when
  // it was sent, and the ones sent together would all pay for the Nsight
  // Compute pass that only a new best needs.
  double best_seen = 0.0;
};

task_evaluators::task_evaluators(int rank, size_t cache_size, std::shared_ptr<eval::compile_pool> pool)
    : rank_(rank), cache_size_(std::max<size_t>(1, cache_size)), pool_(std::move(pool)) {}

void task_evaluators::prepare(const eval_request& r) {
  if (!pool_ || r.code.empty()) return;
  std::vector<std::string> libraries;
  {
    std::lock_guard<std::mutex> lock(libraries_mu_);
    const std::string key = r.op_source + "|" + r.op_hash;
    auto it = libraries_.find(key);
    if (it == libraries_.end()) {
      auto op = spec::find_operator(r.op_source);
      if (!op) return;  // evaluate() says why
      it = libraries_.emplace(key, op->allowed_libraries).first;
    }
    libraries = it->second;
  }
  pool_->submit(r.backend, r.code, libraries);
}
task_evaluators::~task_evaluators() = default;

expected<task_evaluators::entry*> task_evaluators::evaluator_for(const eval_request& r) {
  const eval_settings& s = r.settings;
  const std::string key = r.task_id + "|" + r.op_hash + "|" + std::to_string(s.threads) + "|" + std::to_string(s.budget_seconds) +
                          "|" + std::to_string(s.timeout_ms) + "|" + std::to_string(s.trials) + "|" + std::to_string(s.seed) +
                          "|" + std::to_string(s.torch_baselines) + "|" + std::to_string(s.torch_compile) + "|" + std::to_string(s.ncu) + "|" + s.fitness + "|" +
                          spec::describe_shapes(r.shapes);
  for (auto it = cache_.begin(); it != cache_.end(); ++it)
    if ((*it)->key == key) {
      cache_.splice(cache_.begin(), cache_, it);
      return cache_.front().get();
    }
  auto op = spec::find_operator(r.op_source);
  if (!op) return tl::unexpected(op.error());
  if (operator_files_hash(*op) != r.op_hash)
    return make_error(errc::invalid_input, "operator '" + r.op_source + "' differs between rank 0 and rank " +
                                               std::to_string(rank_) + ": every node must see the same operator files");
  if (!r.shapes.empty())
    if (auto v = spec::replace_timed_shapes(*op, r.shapes); !v)
      return make_error(errc::invalid_input, "sweep.shapes." + op->name + (v.error().message.rfind("[", 0) == 0 ? "" : ": ") + v.error().message);
  // The CPU profile depends on the thread count; the GPU's is one (key -1).
  const int threads = s.threads > 0 ? s.threads : int(std::max(1u, std::thread::hardware_concurrency()));
  auto desc = eval::require_backend(r.backend);
  if (!desc) return tl::unexpected(desc.error());
  const std::string profile_key = r.backend + ((*desc)->traits.profile_per_thread_count ? "|" + std::to_string(threads) : "");
  auto hw = hardware_.find(profile_key);
  if (hw == hardware_.end()) {
    auto profile = eval::backend_hardware(**desc, threads);
    if (!profile) return tl::unexpected(profile.error());
    hw = hardware_.emplace(profile_key, std::move(*profile)).first;
  }
  eval::evaluator_options eo;
  eo.threads = s.threads;
  eo.seed = s.seed;
  eo.time_budget_seconds = s.budget_seconds;
  eo.call_timeout = std::chrono::milliseconds(s.timeout_ms);
  eo.verify_trials = s.trials;
  if (s.torch_baselines >= 0) eo.torch_baselines = s.torch_baselines == 1;
  if (s.torch_compile >= 0) eo.torch_compile = s.torch_compile == 1;
  if (s.ncu >= 0) eo.ncu = s.ncu == 1;
  eo.fitness = s.fitness;
  // Free the least recently used evaluator before building a new one: each
  // may hold gigabytes of inputs.
  while (cache_.size() >= cache_size_) cache_.pop_back();
  auto ev = eval::evaluator::create(*op, r.variant, eo, hw->second);
  if (!ev) return tl::unexpected(ev.error());
  auto e = std::make_unique<entry>();
  e->key = key;
  e->evaluator = std::move(*ev);
  cache_.push_front(std::move(e));
  static const size_t budget = size_t(double(::sysconf(_SC_PHYS_PAGES)) * double(::sysconf(_SC_PAGESIZE)) * 0.4);
  auto held = [&] {
    size_t n = 0;
    for (const auto& c : cache_) n += c->evaluator->host_bytes();
    return n;
  };
  while (cache_.size() > 1 && held() > budget) cache_.pop_back();
  return cache_.front().get();
}

// The last-resort catch where a verdict is made: whatever throws while one
// candidate is evaluated (a bug, an .at() out of range, bad_alloc) becomes
// that candidate's error, with its message, and the evaluator lives on.
eval_result task_evaluators::evaluate(const eval_request& request) {
  const auto start = std::chrono::steady_clock::now();
  try {
    return evaluate_unguarded(request);
  } catch (const std::exception& e) {
    log::error("rank {}: evaluating node {} of task {} threw: {}", rank_, request.node, request.task_id, e.what());
    return thrown(request, start, e.what());
  } catch (...) {
    log::error("rank {}: evaluating node {} of task {} threw a non-standard exception", rank_, request.node, request.task_id);
    return thrown(request, start, "an exception that is not a std::exception");
  }
}

eval_result task_evaluators::thrown(const eval_request& request, std::chrono::steady_clock::time_point start,
                                    const std::string& what) {
  eval_result out;
  out.id = request.id;
  out.rank = rank_;
  out.error = "the evaluator threw while evaluating this candidate: " + what;
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  // The task's evaluator may be half-updated: the next request builds it anew.
  cache_.clear();
  return out;
}

eval_result task_evaluators::evaluate_unguarded(const eval_request& request) {
  const auto start = std::chrono::steady_clock::now();
  eval_result out;
  out.id = request.id;
  out.rank = rank_;
  auto finish = [&] {
    out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return out;
  };
  auto e = evaluator_for(request);
  if (!e) {
    out.error = e.error().message;
    return finish();
  }
  // The task's clock counts evaluating, not building its evaluator (inputs,
  // reference outputs), which happens once per task and rank.
  const auto evaluation_start = std::chrono::steady_clock::now();
  // A compile of this candidate started ahead is finished (or taken back) first.
  if (pool_) pool_->settle(request.backend, request.code);
  auto v = (*e)->evaluator->evaluate(request.code, std::max(request.best_fitness, (*e)->best_seen));
  if (!v) {
    out.error = v.error().message;
    return finish();
  }
  if (v->result == eval::status::ok) (*e)->best_seen = std::max((*e)->best_seen, v->fitness);
  out.status = eval::to_string(v->result);
  if (spdlog::should_log(spdlog::level::debug)) {
    std::string split;
    for (const auto* phases : {&v->overhead_phases, &v->kernel_phases})
      for (const auto& [name, s] : *phases) split += fmt::format("; {} {:.3f}", name, s);
    log::debug("rank {}: evaluation split of node {} of {}: {} in {:.3f} s (compile {:.3f} s{}){}", rank_, request.node,
               request.task_id, out.status, v->seconds, v->compile.seconds, v->compile.cached ? " cached" : "", split);
  }
  // Nor measuring the PyTorch baselines, once per shape and evaluator.
  const auto torch = v->overhead_phases.find(eval::kTorchPhase);
  const double evaluating = std::chrono::duration<double>(std::chrono::steady_clock::now() - evaluation_start).count() -
                            (torch != v->overhead_phases.end() ? torch->second : 0.0);
  out.fitness = v->fitness;
  out.reason = v->reason;
  if (v->result == eval::status::compile_failed) out.reason += "\n" + v->compile.diagnostics.substr(0, 4000);
  out.baseline = (*e)->evaluator->baseline_name();
  out.fitness_over = eval::describe_fitness(*v);
  for (const auto& s : v->shapes) {
    store::shape_measurement m;
    m.node = request.node;
    m.shape = s.shape;
    m.holdout = s.holdout;
    m.status = eval::to_string(s.result);
    m.max_abs_error = s.max_abs_error;
    m.candidate_median_s = s.candidate.median_s;
    m.candidate_p10_s = s.candidate.p10_s;
    m.candidate_p90_s = s.candidate.p90_s;
    m.baseline_median_s = s.baseline.median_s;
    m.torch_eager_median_s = s.torch_eager.time.median_s;
    m.torch_compile_median_s = s.torch_compile.time.median_s;
    m.speedup = s.speedup;
    m.achieved_gbs = s.achieved_gbs;
    m.achieved_gflops = s.achieved_gflops;
    m.roofline_fraction = s.roofline_fraction;
    m.attainable_fraction = s.attainable_fraction;
    m.bound = s.bound;
    m.bottleneck = s.bottleneck;
    m.profile = s.profile;
    for (const auto& [name, value] : s.metrics)  // the store holds finite numbers only
      if (std::isfinite(value)) m.metrics[name] = value;
    out.shapes.push_back(std::move(m));
  }
  finish();
  out.seconds = evaluating;
  return out;
}

}  // namespace kevolve::sweep
