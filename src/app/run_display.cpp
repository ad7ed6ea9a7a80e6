#include "app/run_display.h"

#include <unistd.h>

#include <cstdio>

#include "report/sparkline.h"

namespace kevolve::app {
namespace {

std::string short_number(double x, int width = 5) { return std::to_string(x).substr(0, size_t(width)); }

std::string rank_line(const store::rank_record& r) {
  std::string statuses;
  for (const auto& [status, n] : r.by_status) statuses += (statuses.empty() ? "" : ", ") + std::to_string(n) + " " + status;
  const double busy = r.uptime_seconds > 0 ? 100.0 * r.busy_seconds / r.uptime_seconds : 0.0;
  const std::string who = r.host == "local" ? "local " + r.backend + " evaluator (" + r.state + ")"
                                             : "rank " + std::to_string(r.rank) + " " + r.backend + " (" + r.host + ", " + r.state + ")";
  return who + ": " +
         std::to_string(r.evaluations) + " evaluations" + (statuses.empty() ? "" : " (" + statuses + ")") + ", busy " +
         short_number(busy, 4) + "%, queue " + std::to_string(r.queue_depth) +
         (r.deadline_misses ? ", " + std::to_string(r.deadline_misses) + " deadline misses" : "") + ", cpu " +
         short_number(r.cpu_seconds) + " s";
}

}  // namespace

run_display::run_display() : tty_(::isatty(1)), started_(std::chrono::steady_clock::now()), last_ranks_(started_) {}

void run_display::progress(const sweep::coordinator& c) {
  const sweep::progress_event& p = c.progress();
  std::vector<double>& best = best_[p.task];
  best.push_back(p.best_speedup);
  const std::string line =
      "task " + std::to_string(p.task + 1) + "/" + std::to_string(p.tasks) + " " + p.task_id + ": evaluation " +
      std::to_string(p.evaluations) + (p.max_evaluations ? "/" + std::to_string(p.max_evaluations) : "") + ", best " +
      (p.best_speedup > 0 ? short_number(p.best_speedup) + "x" : "-") + " " + report::sparkline(best, 24) + ", " +
      short_number(p.evals_per_second, 4) +
      " evaluations/s, " + std::to_string(p.tasks_done) + "/" + std::to_string(p.tasks) + " tasks done; " + p.last;
  if (tty_) {
    if (open_line_ && p.task != last_task_) std::printf("\n");
    std::printf("\r\033[K%s", line.c_str());
    open_line_ = true;
  } else {
    std::printf("%s\n", line.c_str());
  }
  last_task_ = p.task;
  const auto now = std::chrono::steady_clock::now();
  if (now - last_ranks_ >= std::chrono::seconds(10)) {
    last_ranks_ = now;
    const double t = std::chrono::duration<double>(now - started_).count();
    if (open_line_) std::printf("\n");
    open_line_ = false;
    for (const auto& r : c.rank_table(t)) std::printf("  %s\n", rank_line(r).c_str());
  }
  std::fflush(stdout);
}

void run_display::notice(const std::string& text) {
  if (open_line_) std::printf("\n");
  open_line_ = false;
  std::printf("note: %s\n", text.c_str());
  std::fflush(stdout);
}

void run_display::end() {
  if (open_line_) std::printf("\n");
  open_line_ = false;
  std::fflush(stdout);
}

void print_rank_table(const store::sweep_record& record) {
  int32_t session = -1;
  for (const auto& r : record.ranks) session = std::max(session, r.session);
  bool header = false;
  for (const auto& r : record.ranks) {
    if (r.session != session) continue;
    if (!header) std::printf("\nevaluators (session %d):\n", session);
    header = true;
    std::printf("  %s\n", rank_line(r).c_str());
  }
}

}  // namespace kevolve::app
