#include "sweep/sweep_runner.h"

#include <algorithm>
#include <ctime>
#include <sstream>

#include "common/fs.h"
#include "common/hash.h"
#include "common/log.h"
#include "common/paths.h"
#include "eval/evaluator.h"
#include "spec/operator_loader.h"
#include "store/hdf5_store.h"

namespace kevolve::sweep {
namespace fs = std::filesystem;

namespace {

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

std::string now_utc() {
  const std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

// "key=value" pairs of two compatibility texts that differ.
std::string differences(const std::string& stored, const std::string& current) {
  auto split = [](const std::string& s) {
    std::vector<std::string> v;
    std::istringstream in(s);
    for (std::string w; in >> w;) v.push_back(w);
    return v;
  };
  const auto a = split(stored), b = split(current);
  std::string out;
  for (size_t i = 0; i < std::max(a.size(), b.size()); ++i) {
    const std::string x = i < a.size() ? a[i] : "", y = i < b.size() ? b[i] : "";
    if (x != y) out += (out.empty() ? "" : "; ") + std::string("store has ") + x + ", config has " + y;
  }
  return out;
}

// The worst timed shape of a node: its roofline fraction and bottleneck.
void diagnostics_of(const store::task_record& t, search::node_id id, synth::context_item& item) {
  double worst = -1;
  for (const auto& m : t.measurements)
    if (m.node == id && !m.holdout && (worst < 0 || m.roofline_fraction < worst)) {
      worst = m.roofline_fraction;
      item.bottleneck = m.bottleneck;
    }
  item.roofline_fraction = std::max(0.0, worst);
}

// A checkpoint killed mid-write leaves <store>.tmp-<pid>; remove those whose
// writer is gone (the store itself is always the last complete checkpoint).
void remove_stale_temporaries(const fs::path& store) {
  std::error_code ec;
  const fs::path dir = store.has_parent_path() ? store.parent_path() : fs::path(".");
  const std::string prefix = store.filename().string() + ".tmp-";
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind(prefix, 0) != 0) continue;
    const std::string pid = name.substr(prefix.size());
    if (pid.empty() || pid.find_first_not_of("0123456789") != std::string::npos) continue;
    if (!fs::exists("/proc/" + pid, ec)) fs::remove(e.path(), ec);
  }
}

}  // namespace

sweep_runner::sweep_runner(spec::sweep_spec spec, run_options options, spec::hardware_profile hardware,
                           synth::synthesizer& synthesizer, std::function<void(const progress_event&)> on_progress)
    : spec_(std::move(spec)),
      options_(std::move(options)),
      hardware_(std::move(hardware)),
      synth_(synthesizer),
      on_progress_(std::move(on_progress)) {}

expected<void> sweep_runner::prepare_record() {
  const std::string compat = spec::compatibility_text(spec_);
  std::error_code ec;
  remove_stale_temporaries(options_.store);
  // Operators may be catalog names or YAML files of their own.
  for (const auto& entry : spec_.operators) {
    auto op = spec::find_operator(entry);
    if (!op) return tl::unexpected(op.error());
    operator_source_[op->name] = entry;
  }
  if (options_.resume) {
    auto stored = store::read_store(options_.store);
    if (!stored) return tl::unexpected(stored.error());
    if (stored->config_hash != content_hash({compat})) {
      // Say what differs: load the stored config as a sweep of its own.
      std::string what = "the configs differ";
      if (auto dir = temp_dir::create("kevolve-resume-")) {
        const fs::path f = dir->path() / "stored.yaml";
        if (write_file_atomic(f, stored->config_yaml))
          if (auto old = spec::load_sweep(f)) what = differences(spec::compatibility_text(*old), compat);
      }
      return make_error(errc::invalid_input, options_.store.string() + ": made from an incompatible config: " + what);
    }
    record_ = std::move(*stored);
  } else {
    if (fs::exists(options_.store, ec))
      return make_error(errc::invalid_input, options_.store.string() +
                                                 ": a store is already there; continue it with --resume, or choose another --store");
    record_.kevolve_version = kevolve_version();
    record_.config_yaml = spec_.text;
    record_.config_hash = content_hash({compat});
    record_.created_at = now_utc();
    for (const auto& entry : spec_.operators) {
      auto op = spec::find_operator(entry);
      if (!op) return tl::unexpected(op.error());
      for (size_t v = 0; v < (spec_.all_variants ? op->variants.size() : 1); ++v)
        for (const auto& backend : spec_.backends) {
          store::task_record t;
          t.op = op->name;
          t.variant = op->variants[v].name;
          t.backend = backend;
          t.id = t.op + "/" + t.variant + "/" + t.backend;
          auto engine = search::search_engine::create(spec_.search);
          if (!engine) return tl::unexpected(engine.error());
          t.search = engine->save();
          record_.tasks.push_back(std::move(t));
        }
    }
  }
  for (const auto& path : options_.seed_from) {
    auto s = store::read_store(path);
    if (!s) return make_error(s.error().code, "--seed-from: " + s.error().message);
    seed_stores_.push_back(std::move(*s));
  }
  return {};
}

std::vector<std::string> sweep_runner::seeds_for(const store::task_record& task) const {
  std::vector<std::string> codes;
  for (const auto& s : seed_stores_)
    for (const auto& t : s.tasks)
      if (t.op == task.op && t.variant == task.variant && t.backend == task.backend) {
        const search::node_id best = t.search.nodes.best();
        if (best != search::kNoNode) codes.push_back(t.search.nodes.at(best).code);
      }
  return codes;
}

expected<void> sweep_runner::checkpoint() {
  if (current_engine_) record_.tasks[current_task_].search = current_engine_->save();
  last_checkpoint_ = std::chrono::steady_clock::now();
  return store::write_store(options_.store, record_);
}

expected<void> sweep_runner::run_task(size_t index) {
  store::task_record& task = record_.tasks[index];
  if (!task.stop_reason.empty()) return {};  // finished before the resume
  const auto source = operator_source_.find(task.op);
  if (source == operator_source_.end())
    return make_error(errc::invalid_input, "task " + task.id + ": operator '" + task.op + "' is not in the sweep's config");
  auto op = spec::find_operator(source->second);
  if (!op) return tl::unexpected(op.error());
  const spec::variant* variant = op->find_variant(task.variant);
  if (!variant) return make_error(errc::invalid_input, "task " + task.id + ": operator has no variant '" + task.variant + "'");

  eval::evaluator_options eo;
  eo.threads = spec_.threads;
  eo.seed = spec_.search.seed;
  eo.time_budget_seconds = spec_.budget_seconds;
  eo.call_timeout = std::chrono::milliseconds(spec_.timeout_ms);
  eo.verify_trials = spec_.trials;
  auto ev = eval::evaluator::create(*op, task.variant, eo, hardware_);
  if (!ev) return make_error(ev.error().code, "task " + task.id + ": " + ev.error().message);
  task.baseline = (*ev)->baseline_name();
  auto engine = search::search_engine::restore(spec_.search, task.search);
  if (!engine) return make_error(engine.error().code, "task " + task.id + ": " + engine.error().message);

  current_task_ = index;
  current_engine_ = &*engine;
  // However this task ends, its state goes back into the record.
  struct release_engine {
    sweep_runner& r;
    store::task_record& t;
    const search::search_engine& e;
    ~release_engine() {
      t.search = e.save();
      r.current_engine_ = nullptr;
    }
  } release{*this, task, *engine};
  const auto task_start = std::chrono::steady_clock::now();
  const double offset = task.seconds_spent;
  auto now = [&] { return offset + seconds_since(task_start); };
  std::vector<std::string> seeds = engine->progress(0).evaluations == 0 ? seeds_for(task) : std::vector<std::string>{};

  // Evaluates one child whose code is set; records verdict and measurements.
  auto evaluate = [&](search::node_id child) -> expected<void> {
    const std::string code = engine->nodes().at(child).code;
    auto v = (*ev)->evaluate(code);
    if (!v) return make_error(v.error().code, "task " + task.id + ": " + v.error().message);
    std::string reason = v->reason;
    if (v->result == eval::status::compile_failed) reason += "\n" + v->compile.diagnostics.substr(0, 4000);
    engine->record(child, v->result, v->fitness, reason, now());
    for (const auto& s : v->shapes) {
      store::shape_measurement m;
      m.node = child;
      m.shape = s.shape;
      m.holdout = s.holdout;
      m.status = eval::to_string(s.result);
      m.max_abs_error = s.max_abs_error;
      m.candidate_median_s = s.candidate.median_s;
      m.candidate_p10_s = s.candidate.p10_s;
      m.candidate_p90_s = s.candidate.p90_s;
      m.baseline_median_s = s.baseline.median_s;
      m.speedup = s.speedup;
      m.achieved_gbs = s.achieved_gbs;
      m.achieved_gflops = s.achieved_gflops;
      m.roofline_fraction = s.roofline_fraction;
      m.bottleneck = s.bottleneck;
      task.measurements.push_back(std::move(m));
    }
    ++sweep_evaluations_;
    task.seconds_spent = now();
    progress_event p;
    p.task = index;
    p.tasks = record_.tasks.size();
    p.task_id = task.id;
    p.evaluations = engine->progress(0).evaluations;
    p.max_evaluations = spec_.search.stop.max_evaluations;
    p.best_speedup = engine->progress(0).best_fitness;
    p.evals_per_second = double(sweep_evaluations_) / std::max(1e-9, seconds_since(started_));
    p.last = "node " + std::to_string(child) + " (" + engine->nodes().at(child).origin + "): " + eval::to_string(v->result) +
             (v->ok() ? " " + std::to_string(v->fitness).substr(0, 5) + "x" : "");
    if (on_progress_) on_progress_(p);
    if (options_.stop_requested && options_.stop_requested()) interrupted_ = true;
    const bool asked = options_.checkpoint_requested && options_.checkpoint_requested();
    if (interrupted_ || asked || seconds_since(last_checkpoint_) >= spec_.checkpoint_seconds) return checkpoint();
    return {};
  };

  // Writes the code of a child (a seed kernel first, if any), then evaluates it.
  auto grow = [&](search::node_id child) -> expected<void> {
    const search::node& n = engine->nodes().at(child);
    if (n.code.empty()) {
      if (n.parent == search::kRoot && !seeds.empty()) {
        engine->set_code(child, "seed", seeds.front());
        seeds.erase(seeds.begin());
      } else {
        synth::synthesis_request req;
        req.op = &*op;
        req.variant = variant;
        req.backend = task.backend;
        req.mode = n.mode;
        req.seed = spec_.search.seed ^ hash_bytes(task.id.data(), task.id.size()) ^ uint64_t(child) * 0x9E3779B97F4A7C15ull;
        for (search::node_id id : n.context) {
          const search::node& c = engine->nodes().at(id);
          synth::context_item item;
          item.id = id;
          item.code = c.code;
          item.result = c.result;
          item.fitness = c.fitness;
          item.reason = c.reason;
          if (c.result == eval::status::compile_failed) item.compile_diagnostics = c.reason;
          diagnostics_of(task, id, item);
          req.context.push_back(std::move(item));
        }
        const synth::synthesis_result out = synth_.write(req);
        if (!out.ok) {
          engine->record(child, eval::status::skipped, 0.0, "the synthesizer wrote nothing: " + out.error, now());
          return {};
        }
        engine->set_code(child, out.origin, out.code);
      }
    }
    return evaluate(child);
  };

  for (search::node_id id : engine->pending_nodes())  // in flight at the last checkpoint
    if (auto r = grow(id); !r) return r;
  while (!interrupted_ && !engine->finished(now())) {
    auto x = engine->next(now());
    if (!x) break;
    if (auto r = grow(x->child); !r) return r;
  }
  if (interrupted_) return checkpoint();  // resumable: no stop reason
  task.stop_reason = engine->stopped(now());
  if (task.stop_reason.empty()) task.stop_reason = "nothing more to try";
  task.seconds_spent = now();
  return checkpoint();
}

expected<store::sweep_record> sweep_runner::run() {
  started_ = last_checkpoint_ = std::chrono::steady_clock::now();
  if (auto r = prepare_record(); !r) return tl::unexpected(r.error());
  if (auto r = checkpoint(); !r) return tl::unexpected(r.error());
  for (size_t i = 0; i < record_.tasks.size() && !interrupted_; ++i)
    if (auto r = run_task(i); !r) {
      // Keep what was done; the error still ends the sweep.
      if (auto c = checkpoint(); !c) log::error("final checkpoint failed: {}", c.error().message);
      return tl::unexpected(r.error());
    }
  return record_;
}

}  // namespace kevolve::sweep
