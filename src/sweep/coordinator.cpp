#include "sweep/coordinator.h"

#include <algorithm>
#include <csignal>
#include <cstring>

#include "eval/backends/registry.h"

namespace kevolve::sweep {

coordinator::coordinator(std::unique_ptr<scheduler> s, std::set<int> remote_ranks)
    : scheduler_(std::move(s)),
      dispatcher_(dispatch_config{scheduler_->spec().runtime.queue_depth, scheduler_->spec().runtime.deadline_seconds,
                                  scheduler_->spec().runtime.silence_seconds}),
      expected_(remote_ranks),
      remote_(std::move(remote_ranks)) {}

void coordinator::add_local_evaluator(int id, const std::string& backend, double now) {
  dispatcher_.add_evaluator(id, backend, "local", now);
  stats_[id].rank = id;
  local_.insert(id);
}

outbox coordinator::start(double now) {
  outbox out;
  // Hellos may come first (they arrive on the transport's thread): a greeting
  // they already ended, in failure or with a running sweep, stays as it is.
  if (phase_ != phase::greeting) return out;
  started_ = last_checkpoint_ = now;
  if (expected_.empty()) {
    phase_ = phase::running;
    request_checkpoint(out, now);  // the store exists from the start
    fill(out, now);
  }
  return out;
}

outbox coordinator::on_hello(const rank_hello& h, double now) {
  outbox out;
  if (phase_ != phase::greeting || !expected_.erase(h.rank)) return out;
  if (!h.error.empty()) {
    hello_errors_.push_back("rank " + std::to_string(h.rank) + " (" + h.host + "): " + h.error);
  } else {
    dispatcher_.add_evaluator(h.rank, h.backend, h.host, now);
    stats_[h.rank].rank = h.rank;
    const auto backends = scheduler_->backends();
    if (std::find(backends.begin(), backends.end(), h.backend) == backends.end())
      out.notices.push_back("rank " + std::to_string(h.rank) + " serves backend '" + h.backend +
                            "', which no unfinished task of this sweep uses: it stays idle");
  }
  if (!expected_.empty()) return out;
  if (!hello_errors_.empty()) {
    std::string all;
    for (const auto& e : hello_errors_) all += (all.empty() ? "" : "\n") + e;
    fail(out, now, error{errc::invalid_input, all});
    return out;
  }
  // Every backend of the sweep needs a rank before the sweep starts.
  if (std::string missing = backends_without_a_rank(); !missing.empty()) {
    fail(out, now, error{errc::invalid_input, missing});
    return out;
  }
  // GPUs of a node are shared out by rank order among its ranks of one backend.
  std::map<std::pair<std::string, std::string>, int> next_device;
  for (const auto& [rank, view] : dispatcher_.ranks()) {
    rank_start s;
    const eval::backend_descriptor* d = eval::find_backend(view.backend);
    if (d && d->traits.uses_device) s.device_index = next_device[{view.host, view.backend}]++;
    out.starts.emplace_back(rank, s);
  }
  phase_ = phase::running;
  request_checkpoint(out, now);
  fill(out, now);
  return out;
}

// "" when every backend of the sweep has an evaluator rank; else which has
// none, who serves what, and how to fix it.
std::string coordinator::backends_without_a_rank() const {
  std::map<std::string, std::vector<int>> serving;
  for (const auto& [rank, view] : dispatcher_.ranks()) serving[view.backend].push_back(rank);
  std::vector<std::string> unserved;
  for (const std::string& backend : scheduler_->backends())
    if (!serving.count(backend)) unserved.push_back(backend);
  if (unserved.empty()) return {};
  std::string missing, served;
  for (const auto& b : unserved) missing += (missing.empty() ? "'" : ", '") + b + "'";
  for (const auto& [backend, ranks] : serving) {
    std::string list;
    for (int r : ranks) list += (list.empty() ? "" : ", ") + std::to_string(r);
    served += (served.empty() ? "" : "; ") + std::string(ranks.size() == 1 ? "rank " : "ranks ") + list + " serve" +
              (ranks.size() == 1 ? "s " : " ") + backend;
  }
  const int last = dispatcher_.ranks().empty() ? 1 : dispatcher_.ranks().rbegin()->first;
  return "no evaluator rank serves backend " + missing + " of the sweep (" + served +
         "): give it a rank in the sweep YAML, e.g. 'runtime: {ranks: [{ranks: \"" + std::to_string(last) +
         "\", backend: " + unserved.front() + "}]}', or start the job with more ranks";
}

void coordinator::fill(outbox& out, double now) {
  if (phase_ != phase::running) return;
  for (const std::string& backend : scheduler_->backends()) {
    if (!dispatcher_.has_live(backend)) {
      std::string why;
      for (const auto& [rank, view] : dispatcher_.ranks())
        if (view.backend == backend && view.state == "retired") {
          const auto r = retired_why_.find(rank);
          why += (why.empty() ? "" : "; ") + std::string("rank ") + std::to_string(rank) + " retired" +
                 (r != retired_why_.end() ? " (" + r->second + ")" : "");
        }
      begin_stop(out, now, "no evaluator rank for backend '" + backend + "' is left");
      outcome_.how = outcome::kind::failed;
      outcome_.failure = error{errc::io_error, "no evaluator rank for backend '" + backend + "' is left" +
                                                   (why.empty() ? std::string() : ": " + why)};
      return;
    }
    int wanted = dispatcher_.wanted(backend) + synthesis_ahead_ - synthesizing_[backend];
    while (wanted > 0) {
      work w = scheduler_->next(backend);
      if (w.empty()) break;
      if (w.request) {
        dispatcher_.enqueue(std::move(*w.request));
      } else {
        ++synthesizing_[backend];
        out.synthesis.push_back(std::move(*w.job));
      }
      --wanted;
    }
  }
  for (auto& [rank, request] : dispatcher_.assign(now)) out.evaluations.emplace_back(rank, std::move(request));
  // Notes on improvements (a verdict may reach its tree while a child is
  // grown, so after next() as well as after a result).
  for (synth_job& job : scheduler_->take_note_jobs()) {
    ++notes_pending_;
    out.synthesis.push_back(std::move(job));
  }
  bool synthesizing = notes_pending_ > 0;
  for (const auto& [b, n] : synthesizing_) synthesizing |= n > 0;
  if (scheduler_->finished() && dispatcher_.outstanding() == 0 && !synthesizing) {
    final_checkpoint(out, now);
  }
}

outbox coordinator::on_written(const synth_job& job, const synth::synthesis_result& r, double now) {
  outbox out;
  --synthesizing_[job.request.backend];
  if (phase_ != phase::running && phase_ != phase::draining) return out;
  auto request = scheduler_->written(job, r);
  // While draining, a written child stays pending (with its code) for --resume.
  if (request && phase_ == phase::running) dispatcher_.enqueue(std::move(*request));
  if (!request) out.progress = true;
  fill(out, now);
  return out;
}

outbox coordinator::on_noted(const synth_job& job, const synth::note_result& r, double now) {
  outbox out;
  --notes_pending_;
  if (phase_ != phase::running && phase_ != phase::draining) return out;
  scheduler_->noted(job, r);
  fill(out, now);
  return out;
}

namespace {
eval_result with_rank(eval_result r, int32_t rank) {
  r.rank = rank;
  return r;
}
}  // namespace

void coordinator::count(const eval_result& r) {
  rank_stats& s = stats_[r.rank];
  s.rank = r.rank;
  ++s.evaluations;
  ++s.by_status[r.error.empty() ? r.status : "error"];
  s.busy_seconds += r.seconds;
}

outbox coordinator::on_result(const eval_result& r, double now) {
  outbox out;
  count(r);
  auto request = dispatcher_.complete(r.rank, r.id, now);
  if (!request || (phase_ != phase::running && phase_ != phase::draining)) return out;
  // After a stop signal, a failure may be the signal's doing (a compiler or
  // worker killed by the batch system): it is not recorded, and the node
  // runs again on --resume. A passing or wrong result is the kernel's own.
  if (phase_ == phase::draining && r.error.empty() && r.status != "ok" && r.status != "wrong_result" &&
      r.status != "suspicious") {
    out.notices.push_back("node " + std::to_string(request->node) + " of " + request->task_id + " ended " + r.status +
                          " during the stop: kept pending, it runs again on --resume");
  } else if (auto rec = scheduler_->record(*request, local_.count(r.rank) ? with_rank(r, 0) : r); !rec) {
    fail(out, now, rec.error());
    return out;
  } else {
    out.progress = true;
  }
  if (phase_ == phase::draining) {
    if (dispatcher_.held() == 0) {
      final_checkpoint(out, now);
    }
    return out;
  }
  if (now - last_checkpoint_ >= scheduler_->spec().checkpoint_seconds) request_checkpoint(out, now);
  fill(out, now);
  return out;
}

outbox coordinator::on_heartbeat(const rank_stats& s, double now) {
  dispatcher_.heard_from(s.rank, now);
  rank_stats& mine = stats_[s.rank];
  mine.rank = s.rank;
  mine.cpu_seconds = s.cpu_seconds;
  mine.uptime_seconds = s.uptime_seconds;
  return {};
}

// The last checkpoint of the run; when it is written, the run finishes.
void coordinator::final_checkpoint(outbox& out, double now) {
  phase_ = phase::checkpointing;
  final_pending_ = true;
  request_checkpoint(out, now);
}

void coordinator::request_checkpoint(outbox& out, double now) {
  if (checkpoint_running_) return;  // a final one follows when this one is done
  scheduler_->set_rank_stats(rank_table(now));
  out.checkpoint = scheduler_->snapshot();
  out.checkpoint_sequence = ++checkpoint_sequence_;
  if (final_pending_) {
    final_sequence_ = checkpoint_sequence_;
    final_pending_ = false;
  }
  checkpoint_running_ = true;
  last_checkpoint_ = now;
}

outbox coordinator::on_checkpoint_done(uint64_t sequence, const std::string& err, double now) {
  outbox out;
  checkpoint_running_ = false;
  if (!err.empty()) {
    outcome_.how = outcome::kind::failed;
    outcome_.failure = error{errc::io_error, "checkpoint failed: " + err};
    finish(out, now);
    return out;
  }
  if (sequence == final_sequence_) {
    finish(out, now);
    return out;
  }
  if (final_pending_) request_checkpoint(out, now);
  return out;
}

void coordinator::begin_stop(outbox& out, double now, const std::string& why) {
  if (phase_ == phase::draining || phase_ == phase::checkpointing || phase_ == phase::done) return;
  if (outcome_.how == outcome::kind::completed) outcome_.how = outcome::kind::interrupted;
  outcome_.interrupted_by = why;
  out.notices.push_back(why + ": finishing the evaluations in flight, then a final checkpoint");
  if (phase_ == phase::greeting) {
    finish(out, now);  // nothing started, nothing to keep
    return;
  }
  phase_ = phase::draining;
  stop_deadline_ = now + scheduler_->spec().runtime.grace_seconds * 0.5;
  if (dispatcher_.held() == 0) {
    final_checkpoint(out, now);
  }
}

outbox coordinator::on_signal(int rank, int signo, double now) {
  outbox out;
  const char* name = signo == SIGTERM ? "SIGTERM" : signo == SIGINT ? "SIGINT" : signo == SIGUSR1 ? "SIGUSR1" : "a signal";
  begin_stop(out, now, std::string(name) + " on rank " + std::to_string(rank));
  return out;
}

outbox coordinator::on_codec_failure(int rank, const std::string& message, double now) {
  outbox out;
  if (phase_ == phase::greeting && expected_.count(rank)) {
    rank_hello h;
    h.rank = rank;
    h.host = "?";
    h.error = message;
    return on_hello(h, now);
  }
  out.notices.push_back(message + ": rank " + std::to_string(rank) + " retired");
  retired_why_[rank] = message;
  dispatcher_.retire(rank);
  fill(out, now);
  return out;
}

outbox coordinator::on_tick(double now) {
  outbox out;
  if (phase_ == phase::farewell) {
    if (now >= farewell_until_) conclude(out);
    return out;
  }
  if (phase_ == phase::greeting) {
    if (now - started_ > scheduler_->spec().runtime.hello_seconds) {
      std::string missing;
      for (int r : expected_) missing += (missing.empty() ? "" : ", ") + std::to_string(r);
      fail(out, now, error{errc::io_error, "ranks " + missing + " did not say hello within " +
                                               std::to_string(int(scheduler_->spec().runtime.hello_seconds)) + " s"});
    }
    return out;
  }
  for (const dispatch_event& e : dispatcher_.check(now)) {
    out.notices.push_back("rank " + std::to_string(e.rank) + " " + e.what);
    retired_why_[e.rank] = e.what;
  }
  if (phase_ == phase::running) {
    if (now - last_checkpoint_ >= scheduler_->spec().checkpoint_seconds) request_checkpoint(out, now);
    fill(out, now);
  } else if (phase_ == phase::draining && (dispatcher_.held() == 0 || now >= stop_deadline_)) {
    if (dispatcher_.held() > 0)
      out.notices.push_back(std::to_string(dispatcher_.held()) + " evaluation(s) still running at the end of the grace period: " +
                            "they stay pending in the store and run again on --resume");
    final_checkpoint(out, now);
  }
  return out;
}

void coordinator::fail(outbox& out, double now, error e) {
  outcome_.how = outcome::kind::failed;
  outcome_.failure = std::move(e);
  if (phase_ == phase::greeting) {
    finish(out, now);
    return;
  }
  final_checkpoint(out, now);  // keep what was done
}

void coordinator::finish(outbox& out, double now) {
  scheduler_->set_rank_stats(rank_table(now));
  outcome_.record = scheduler_->snapshot();
  const auto ranks = dispatcher_.ranks();
  for (int r : remote_) {
    const auto it = ranks.find(r);
    if (it == ranks.end() || it->second.state != "retired") farewell_.insert(r);
  }
  out.stops.assign(farewell_.begin(), farewell_.end());
  farewell_complete_ = ranks.size() >= remote_.size();
  for (const auto& [rank, view] : ranks) farewell_complete_ &= view.state != "retired";
  if (farewell_.empty()) {
    conclude(out);
    return;
  }
  phase_ = phase::farewell;
  farewell_until_ = now + std::min(10.0, scheduler_->spec().runtime.silence_seconds);
}

outbox coordinator::on_bye(int rank, double) {
  outbox out;
  if (phase_ != phase::farewell) return out;
  farewell_.erase(rank);
  if (farewell_.empty()) conclude(out);
  return out;
}

void coordinator::conclude(outbox& out) {
  // A rank that did not say bye may be dead: nobody waits for it in MPI_Finalize.
  const bool everyone = farewell_.empty() && farewell_complete_;
  for (int r : remote_) out.shutdowns.push_back(r);
  out.finalize = everyone && outcome_.how != outcome::kind::failed;
  outcome_.finalize = out.finalize;
  phase_ = phase::done;
}

std::vector<rank_stats> coordinator::rank_table(double now) const {
  std::vector<rank_stats> out;
  for (const auto& [rank, view] : dispatcher_.ranks()) {
    rank_stats s;
    if (auto it = stats_.find(rank); it != stats_.end()) s = it->second;
    s.rank = rank;
    s.host = view.host;
    s.backend = view.backend;
    const bool ending = phase_ == phase::done || phase_ == phase::checkpointing || phase_ == phase::farewell;
    s.state = ending && view.state == "active" ? "finished" : view.state;
    s.deadline_misses = view.deadline_misses;
    s.queue_depth = view.queue_depth;
    // Heartbeats are periodic: the coordinator's clock is the fresher one.
    s.uptime_seconds = std::max(s.uptime_seconds, now - started_);
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace kevolve::sweep
