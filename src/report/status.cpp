#include "report/status.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "report/text_table.h"

namespace kevolve::report {

std::string duration_text(double seconds) {
  if (seconds < 0) return "unknown";
  const auto s = int64_t(std::llround(seconds));
  if (s < 60) return fmt::format("{} s", s);
  if (s < 3600) return fmt::format("{} min {:02} s", s / 60, s % 60);
  return fmt::format("{} h {:02} min", s / 3600, (s % 3600) / 60);
}

sweep_status compute_status(const store::sweep_record& r, const search::stop_config& stop) {
  sweep_status st;
  double seconds_total = 0.0;
  int64_t evaluations_timed = 0;
  for (const auto& t : r.tasks) {
    task_status ts;
    ts.task = t.id;
    ts.stop_reason = t.stop_reason;
    ts.seconds = t.seconds_spent;
    const auto& nodes = t.search.nodes.nodes();
    for (const auto& n : nodes) {
      if (n.id == search::kRoot) continue;
      if (n.state != search::node_state::evaluated) {
        ++ts.pending_nodes;
        continue;
      }
      ++ts.evaluations;
      ++st.by_status[eval::to_string(n.result)];
      if (n.ok() && n.fitness > ts.best_speedup) {
        ts.best_speedup = n.fitness;
        ts.best_node = n.id;
      }
    }
    ts.state = !t.stop_reason.empty() ? "done" : nodes.size() > 1 ? "running" : "pending";
    if (ts.state == "done") ++st.done;
    else if (ts.state == "running") ++st.running;
    else ++st.pending;
    st.evaluations += ts.evaluations;
    st.pending_nodes += ts.pending_nodes;
    if (ts.evaluations > 0) {
      seconds_total += ts.seconds;
      evaluations_timed += ts.evaluations;
    }
    st.tasks.push_back(std::move(ts));
  }
  for (const auto& rk : r.ranks) st.session = std::max(st.session, rk.session);
  for (const auto& rk : r.ranks)
    if (rk.session == st.session) st.ranks.push_back(rk);
  int alive = 0;
  for (const auto& rk : st.ranks) alive += rk.state != "retired";
  st.parallel = std::max(1, alive);
  st.seconds_per_evaluation = evaluations_timed > 0 ? seconds_total / double(evaluations_timed) : 0.0;

  const double inf = std::numeric_limits<double>::infinity();
  double sum = 0.0;
  bool unknown = false;
  for (auto& ts : st.tasks) {
    if (ts.state == "done") {
      ts.seconds_left = 0.0;
      continue;
    }
    const double per_eval = ts.evaluations > 0 ? ts.seconds / double(ts.evaluations) : st.seconds_per_evaluation;
    double by_evals = inf, by_time = inf;
    if (stop.max_evaluations > 0 && (per_eval > 0 || ts.evaluations >= stop.max_evaluations))
      by_evals = double(std::max<int64_t>(0, stop.max_evaluations - ts.evaluations)) * per_eval;
    if (stop.max_seconds > 0) by_time = std::max(0.0, stop.max_seconds - ts.seconds);
    ts.seconds_left = std::min(by_evals, by_time);
    if (std::isinf(ts.seconds_left)) {
      ts.seconds_left = -1.0;
      unknown = true;
    } else {
      sum += ts.seconds_left;
    }
  }
  st.seconds_left = unknown ? -1.0 : sum / double(st.parallel);
  return st;
}

std::string status_text(const sweep_status& s, const store::sweep_record& r, const std::string& store_path,
                        double checkpoint_age_s) {
  std::string out = fmt::format("store {} (kevolve {}, created {})\n", store_path, r.kevolve_version, r.created_at);
  if (checkpoint_age_s >= 0) out += fmt::format("last checkpoint written {} ago\n", duration_text(checkpoint_age_s));
  out += fmt::format("tasks: {} done, {} running, {} pending ({} in all)\n", s.done, s.running, s.pending, s.tasks.size());
  std::string verdicts;
  for (const auto& [k, v] : s.by_status) verdicts += (verdicts.empty() ? "" : ", ") + k + " " + std::to_string(v);
  out += fmt::format("evaluations: {}{}; pending nodes (written, not yet evaluated): {}\n\n", s.evaluations,
                     verdicts.empty() ? "" : " (" + verdicts + ")", s.pending_nodes);

  std::vector<std::vector<std::string>> rows = {
      {"task", "state", "evaluations", "pending", "best speedup", "time", "time left", "stopped because"}};
  for (const auto& t : s.tasks)
    rows.push_back({t.task, t.state, std::to_string(t.evaluations), std::to_string(t.pending_nodes),
                    t.best_node >= 0 ? fmt::format("{:.3f}x (node {})", t.best_speedup, t.best_node) : "-",
                    duration_text(t.seconds), t.state == "done" ? "-" : duration_text(t.seconds_left),
                    t.stop_reason.empty() ? "-" : t.stop_reason});
  out += text_table(rows);

  const task_status* best = nullptr;
  for (const auto& t : s.tasks)
    if (t.best_node >= 0 && (!best || t.best_speedup > best->best_speedup)) best = &t;
  if (best) out += fmt::format("\nbest so far: {} at {:.3f}x over its baseline (node {})\n", best->task, best->best_speedup, best->best_node);
  else out += "\nbest so far: no correct kernel yet\n";

  if (!s.ranks.empty()) {
    out += fmt::format("\nevaluator ranks of session {} (0 = the first run, +1 per resume):\n", s.session);
    std::vector<std::vector<std::string>> rk = {
        {"rank", "host", "backend", "state", "evaluations", "busy", "deadline misses", "errors", "uptime"}};
    for (const auto& x : s.ranks) {
      const auto err = x.by_status.find("error");
      rk.push_back({std::to_string(x.rank), x.host, x.backend, x.state, std::to_string(x.evaluations),
                    x.uptime_seconds > 0 ? fmt::format("{:.0f}%", 100.0 * x.busy_seconds / x.uptime_seconds) : "-",
                    std::to_string(x.deadline_misses), std::to_string(err == x.by_status.end() ? 0 : err->second),
                    duration_text(x.uptime_seconds)});
    }
    out += text_table(rk);
  }

  if (s.done == int(s.tasks.size())) {
    out += "\nestimated time left: none, every task has stopped\n";
  } else if (s.seconds_left < 0) {
    out += "\nestimated time left: unknown (the stop rules set neither max_evaluations nor max_seconds, or nothing "
           "has been evaluated yet)\n";
  } else {
    out += fmt::format(
        "\nestimated time left: about {} (at most; {:.1f} s per evaluation, {} evaluator rank{}; stagnation or "
        "target_fitness may stop tasks sooner)\n",
        duration_text(s.seconds_left), s.seconds_per_evaluation, s.parallel, s.parallel == 1 ? "" : "s");
  }
  out += fmt::format("\nevery tree, kernel and failure: kevolve report {} --html report.html\n", store_path);
  return out;
}

}  // namespace kevolve::report
