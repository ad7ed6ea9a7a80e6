#include "sweep/scheduler.h"

#include <algorithm>
#include <ctime>
#include <limits>
#include <sstream>
#include <utility>

#include "common/fs.h"
#include "common/hash.h"
#include "common/log.h"
#include "common/paths.h"
#include "eval/backends/registry.h"
#include "eval/status.h"
#include "search/engine.h"
#include "spec/operator_loader.h"
#include "spec/shape_points.h"
#include "store/hdf5_store.h"
#include "sweep/skill_notes.h"
#include "sweep/node_diagnosis.h"

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

// The LLM requests made for a node, kept with the task (store schema 3).
void keep_llm_calls(store::task_record& task, int64_t node, const std::vector<synth::llm_call>& calls) {
  for (const synth::llm_call& c : calls) {
    store::llm_exchange x;
    x.node = node;
    x.purpose = c.purpose;
    x.endpoint = c.endpoint;
    x.model = c.model;
    x.status = c.status;
    x.error = c.error;
    x.prompt = c.prompt;
    x.reply = c.reply;
    x.documents = c.documents;
    x.attempts = c.attempts;
    x.prompt_tokens = c.prompt_tokens;
    x.completion_tokens = c.completion_tokens;
    x.tokens_estimated = c.tokens_estimated ? 1 : 0;
    x.latency_s = c.latency_s;
    x.total_s = c.total_s;
    x.cost = c.cost;
    x.prompt_ms = c.prompt_ms;
    task.llm.push_back(std::move(x));
  }
}

}  // namespace

// A task being searched: its operator, its engine and what it has been given.
struct scheduler::active_task {
  size_t index = 0;
  spec::operator_spec op;
  const spec::variant* variant = nullptr;
  std::string op_hash;
  std::unique_ptr<search::search_engine> engine;
  std::vector<std::string> seeds;   // kernels of earlier stores, for the first root children
  std::vector<int64_t> reissue;     // pending at the last checkpoint: evaluate again
  std::map<int64_t, node_diagnosis> worst;  // node -> what its timed shapes say (node_diagnosis.h)
  int64_t issued = 0;               // for fair share
  double priority = 1.0;
  double seconds_before = 0.0;      // spent in earlier sessions
  double spent = 0.0;               // evaluation seconds of this session (its clock)
  bool exhausted = false;           // the engine had nothing more to grow
  bool done = false;
};

scheduler::scheduler(spec::sweep_spec spec, run_options options)
    : spec_(std::move(spec)), options_(std::move(options)) {}

scheduler::~scheduler() = default;

expected<std::unique_ptr<scheduler>> scheduler::create(spec::sweep_spec spec, run_options options) {
  std::unique_ptr<scheduler> s(new scheduler(std::move(spec), std::move(options)));
  if (auto r = s->prepare(); !r) return tl::unexpected(r.error());
  return s;
}

expected<void> scheduler::prepare() {
  started_ = std::chrono::steady_clock::now();
  const std::string compat = spec::compatibility_text(spec_);
  std::error_code ec;
  remove_stale_temporaries(options_.store);
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
    for (const auto& r : record_.ranks) session_ = std::max(session_, r.session + 1);
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
          // `variants: default`: the backend's default variant of the operator.
          const auto dv = op->default_variant.find(backend);
          const spec::variant& variant = spec_.all_variants || dv == op->default_variant.end()
                                             ? op->variants[v]
                                             : *op->find_variant(dv->second);
          // A backend with no yardstick for the operator (no baseline of its
          // own, no PyTorch there) has nothing to time candidates against.
          const eval::backend_descriptor* d = eval::find_backend(backend);
          if (d && !op->baselines.count(d->baseline_of) && (d->torch_device.empty() || !op->has_torch())) {
            if (v == 0)
              log::info("{} on {}: left out of the sweep: the operator has no 'baselines.{}' and {} has no PyTorch",
                        op->name, backend, d->baseline_of, backend);
            continue;
          }
          store::task_record t;
          t.op = op->name;
          t.variant = variant.name;
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
  activated_.assign(record_.tasks.size(), false);
  progress_.tasks = record_.tasks.size();
  for (const auto& t : record_.tasks) progress_.tasks_done += !t.stop_reason.empty();
  return {};
}

// A task's clock is the evaluation time spent on it, not the wall time since
// it started: tasks share evaluators, and a task waiting in a queue behind
// others must not use up its `max_seconds`. (With one task and one evaluator
// the two agree, as they did when tasks ran one after the other.)
double scheduler::now(const active_task& t) const { return t.seconds_before + t.spent; }

scheduler::active_task* scheduler::activate(size_t index) {
  activated_[index] = true;
  store::task_record& task = record_.tasks[index];
  if (!task.stop_reason.empty()) return nullptr;  // finished before the resume
  auto t = std::make_unique<active_task>();
  t->index = index;
  auto op = spec::find_operator(operator_source_.at(task.op));
  auto engine = search::search_engine::restore(spec_.search, task.search);
  if (!op || !engine) {
    task.stop_reason = "could not start: " + (!op ? op.error().message : engine.error().message);
    ++progress_.tasks_done;
    return nullptr;
  }
  t->op = std::move(*op);
  if (const auto sh = spec_.shapes.find(task.op); sh != spec_.shapes.end())
    if (auto r = spec::replace_timed_shapes(t->op, sh->second); !r) {
      task.stop_reason = "could not start: sweep.shapes." + task.op + r.error().message;
      ++progress_.tasks_done;
      return nullptr;
    }
  t->variant = t->op.find_variant(task.variant);
  if (!t->variant) {
    task.stop_reason = "could not start: the operator has no variant '" + task.variant + "'";
    ++progress_.tasks_done;
    return nullptr;
  }
  t->op_hash = operator_files_hash(t->op);
  t->engine = std::make_unique<search::search_engine>(std::move(*engine));
  t->reissue = t->engine->pending_nodes();
  if (t->engine->progress(0).evaluations == 0 && t->reissue.empty())
    for (const auto& s : seed_stores_)
      for (const auto& st : s.tasks)
        if (st.op == task.op && st.variant == task.variant && st.backend == task.backend) {
          const search::node_id best = st.search.nodes.best();
          if (best != search::kNoNode) t->seeds.push_back(st.search.nodes.at(best).code);
        }
  if (unserved_ && t->engine->nodes().size() <= 1 && t->seeds.empty())
    if (std::string why = unserved_(t->op, *t->variant, task.backend); !why.empty()) {
      log::warn("task {}: {}", task.id, why);
      task.stop_reason = why;
      ++progress_.tasks_done;
      return nullptr;
    }
  for (const auto& m : task.measurements)
    if (!m.holdout) t->worst[m.node].add(m);
  const auto p = spec_.priorities.find(task.op);
  t->priority = p != spec_.priorities.end() ? p->second : 1.0;
  t->seconds_before = task.seconds_spent;
  active_.push_back(std::move(t));
  return active_.back().get();
}

eval_request scheduler::request_for(active_task& t, int64_t node) {
  const store::task_record& task = record_.tasks[t.index];
  eval_request r;
  r.id = next_id_++;
  r.task_id = task.id;
  r.op_source = operator_source_.at(task.op);
  r.op_hash = t.op_hash;
  r.variant = task.variant;
  r.backend = task.backend;
  r.settings.threads = spec_.threads;
  r.settings.budget_seconds = spec_.budget_seconds;
  r.settings.torch_baselines = spec_.torch_baselines == "auto" ? -1 : spec_.torch_baselines == "on";
  r.settings.ncu = spec_.ncu == "auto" ? -1 : spec_.ncu == "on";
  r.settings.torch_compile = spec_.torch_compile == "auto" ? -1 : spec_.torch_compile == "on";
  r.settings.fitness = spec_.fitness;
  r.settings.timeout_ms = spec_.timeout_ms;
  r.settings.trials = spec_.trials;
  r.settings.seed = spec_.search.seed;
  r.node = node;
  r.code = t.engine->nodes().at(node).code;
  if (const auto sh = spec_.shapes.find(task.op); sh != spec_.shapes.end()) r.shapes = sh->second;
  r.best_fitness = t.engine->progress(now(t)).best_fitness;
  ++t.issued;
  return r;
}

work scheduler::grow(active_task& t) {
  work w;
  const store::task_record& task = record_.tasks[t.index];
  int64_t node = -1;
  if (!t.reissue.empty()) {
    node = t.reissue.front();
    t.reissue.erase(t.reissue.begin());
  } else {
    auto x = t.engine->next(now(t));
    ask_for_notes(t);  // next() may apply a held verdict
    if (!x) {
      // Stopped, or nothing left to grow: the task ends once nothing is in flight.
      if (t.engine->in_flight() == 0) {
        t.exhausted = true;
        finish_if_done(t);
      }
      return w;
    }
    node = x->child;
  }
  const search::node& n = t.engine->nodes().at(node);
  if (!n.code.empty()) {
    w.request = request_for(t, node);
    return w;
  }
  if (n.parent == search::kRoot && !t.seeds.empty()) {
    t.engine->set_code(node, "seed", t.seeds.front());
    t.seeds.erase(t.seeds.begin());
    w.request = request_for(t, node);
    return w;
  }
  synth_job job;
  job.id = next_id_++;
  job.task = t.index;
  job.node = node;
  synth::synthesis_request& req = job.request;
  req.op = &t.op;
  req.variant = t.variant;
  req.backend = task.backend;
  req.mode = n.mode;
  req.parent = n.parent;
  if (n.parent != search::kNoNode) {
    const auto& siblings = t.engine->nodes().at(n.parent).children;
    req.sibling_index = int(std::find(siblings.begin(), siblings.end(), node) - siblings.begin());
  }
  req.seed = spec_.search.seed ^ hash_bytes(task.id.data(), task.id.size()) ^ uint64_t(node) * 0x9E3779B97F4A7C15ull;
  for (search::node_id id : n.context) {
    const search::node& c = t.engine->nodes().at(id);
    synth::context_item item;
    item.id = id;
    item.code = c.code;
    item.result = c.result;
    item.fitness = c.fitness;
    item.reason = c.reason;
    if (c.result == eval::status::compile_failed) item.compile_diagnostics = c.reason;
    if (auto it = t.worst.find(id); it != t.worst.end()) it->second.describe(item);
    req.context.push_back(std::move(item));
  }
  ++t.issued;
  w.job = std::move(job);
  return w;
}

work scheduler::next(const std::string& backend) {
  // The least-served active task (issued / priority) that can grow now.
  std::vector<active_task*> order;
  for (auto& t : active_)
    if (!t->done && record_.tasks[t->index].backend == backend) order.push_back(t.get());
  std::stable_sort(order.begin(), order.end(), [](const active_task* a, const active_task* b) {
    return double(a->issued) / a->priority < double(b->issued) / b->priority;
  });
  for (active_task* t : order)
    if (work w = grow(*t); !w.empty()) return w;
  // None can: start the next task of this backend.
  for (size_t i = 0; i < record_.tasks.size(); ++i) {
    if (activated_[i] || record_.tasks[i].backend != backend) continue;
    if (active_task* t = activate(i)) {
      if (work w = grow(*t); !w.empty()) return w;
      finish_if_done(*t);
    }
  }
  return {};
}

std::optional<eval_request> scheduler::written(const synth_job& job, const synth::synthesis_result& out) {
  for (auto& t : active_) {
    if (t->index != job.task) continue;
    keep_llm_calls(record_.tasks[t->index], job.node, out.calls);
    if (!out.ok) {
      t->spent += 0.001;  // so that a synthesizer failing every time still ends a timed task
      t->engine->record(job.node, eval::status::skipped, 0.0, "the synthesizer wrote nothing: " + out.error, now(*t));
      ask_for_notes(*t);
      note_progress(*t, "node " + std::to_string(job.node) + ": skipped, the synthesizer wrote nothing: " + out.error);
      finish_if_done(*t);
      return std::nullopt;
    }
    t->engine->set_code(job.node, out.origin, out.code);
    --t->issued;  // request_for counts it again
    return request_for(*t, job.node);
  }
  return std::nullopt;
}

std::vector<synth_job> scheduler::take_note_jobs() { return std::exchange(note_jobs_, {}); }

void scheduler::noted(const synth_job& job, const synth::note_result& out) {
  for (auto& t : active_) {
    if (t->index != job.task) continue;
    store::task_record& task = record_.tasks[t->index];
    keep_llm_calls(task, job.node, out.calls);
    const int64_t exchange = out.calls.empty() ? -1 : int64_t(task.llm.size()) - 1;
    if (auto k = make_skill_note(task, t->engine->nodes(), job.node, t->op, out, exchange)) task.skills.push_back(std::move(*k));
    return;
  }
}

expected<void> scheduler::record(const eval_request& request, const eval_result& result) {
  active_task* t = nullptr;
  for (auto& a : active_)
    if (record_.tasks[a->index].id == request.task_id) t = a.get();
  if (!t) return {};  // a task that already ended
  store::task_record& task = record_.tasks[t->index];
  if (!result.error.empty())
    return make_error(errc::internal, "task " + task.id + ": rank " + std::to_string(result.rank) + ": " + result.error);
  eval::status st = eval::status::runtime_failed;
  if (!eval::parse_status(result.status, st))
    return make_error(errc::internal, "task " + task.id + ": unknown verdict status '" + result.status + "'");
  task.baseline = result.baseline;
  if (!result.fitness_over.empty()) task.fitness_over = result.fitness_over;
  t->spent += std::max(0.001, result.seconds);
  t->engine->record(request.node, st, result.fitness, result.reason, now(*t), result.rank);
  node_diagnosis diagnosis;
  for (const auto& s : result.shapes) diagnosis.add(s);
  if (diagnosis.timed()) t->worst[request.node] = diagnosis;
  for (const auto& s : result.shapes) {
    store::shape_measurement m = s;
    m.node = request.node;
    task.measurements.push_back(std::move(m));
  }
  ++sweep_evaluations_;
  task.seconds_spent = now(*t);
  ask_for_notes(*t);
  const search::node& n = t->engine->nodes().at(request.node);
  note_progress(*t, "node " + std::to_string(request.node) + " (" + n.origin + ", rank " + std::to_string(result.rank) +
                        "): " + result.status +
                        (st == eval::status::ok ? " " + std::to_string(result.fitness).substr(0, 5) + "x" : ""));
  finish_if_done(*t);
  return {};
}

// Verdicts reach the tree in the order their children were handed out (the
// engine may hold one): a child that beat its task's best when applied, grown
// from another node, gets a note job in an llm sweep.
void scheduler::ask_for_notes(active_task& t) {
  const store::task_record& task = record_.tasks[t.index];
  for (const search::search_engine::applied& a : t.engine->take_applied()) {
    if (!a.improved || t.engine->nodes().at(a.child).parent <= search::kRoot || spec_.synthesizer != "llm" ||
        spec_.llm.skill_note_chars <= 0)
      continue;
    synth_job job;
    job.id = next_id_++;
    job.task = t.index;
    job.node = a.child;
    job.request.backend = task.backend;
    job.note = make_note_request(task, t.engine->nodes(), a.child, t.op, t.variant);
    note_jobs_.push_back(std::move(job));
  }
}

void scheduler::note_progress(active_task& t, const std::string& last) {
  const search::search_progress p = t.engine->progress(now(t));
  progress_.task = t.index;
  progress_.task_id = record_.tasks[t.index].id;
  progress_.evaluations = p.evaluations;
  progress_.max_evaluations = spec_.search.stop.max_evaluations;
  progress_.best_speedup = p.best_fitness;
  progress_.evals_per_second = double(sweep_evaluations_) / std::max(1e-9, seconds_since(started_));
  progress_.last = last;
}

void scheduler::finish_if_done(active_task& t) {
  if (t.done) return;
  store::task_record& task = record_.tasks[t.index];
  const double when = now(t);
  if (!t.engine->finished(when) && !(t.exhausted && t.engine->in_flight() == 0)) return;
  task.stop_reason = t.engine->stopped(when);
  if (task.stop_reason.empty()) task.stop_reason = "nothing more to try";
  task.seconds_spent = when;
  task.search = t.engine->save();
  t.done = true;
  ++progress_.tasks_done;
}

bool scheduler::finished() const {
  for (size_t i = 0; i < record_.tasks.size(); ++i)
    if (record_.tasks[i].stop_reason.empty()) return false;
  return true;
}

std::vector<std::string> scheduler::backends() const {
  std::vector<std::string> out;
  for (const auto& t : record_.tasks)
    if (t.stop_reason.empty() && std::find(out.begin(), out.end(), t.backend) == out.end()) out.push_back(t.backend);
  return out;
}

const store::sweep_record& scheduler::snapshot() {
  for (auto& t : active_)
    if (!t->done) {
      record_.tasks[t->index].search = t->engine->save();
      record_.tasks[t->index].seconds_spent = now(*t);
    }
  return record_;
}

void scheduler::set_rank_stats(std::vector<rank_stats> stats) {
  auto& ranks = record_.ranks;
  ranks.erase(std::remove_if(ranks.begin(), ranks.end(), [&](const rank_stats& r) { return r.session == session_; }),
              ranks.end());
  for (auto& s : stats) {
    s.session = session_;
    ranks.push_back(std::move(s));
  }
}

}  // namespace kevolve::sweep
