// What `kevolve run` shows while a sweep runs: one progress line per verdict
// with a sparkline of the task's best fitness (rewritten in place on a
// terminal, each task's last line kept), notices about ranks, and every 10 s a
// line per evaluator rank with its counters; at the end, the rank table.
#pragma once

#include <chrono>
#include <map>
#include <vector>
#include <string>

#include "store/sweep_record.h"
#include "sweep/coordinator.h"

namespace kevolve::app {

class run_display {
 public:
  run_display();
  void progress(const sweep::coordinator& c);
  void notice(const std::string& text);
  void end();

 private:
  bool tty_;
  bool open_line_ = false;
  size_t last_task_ = size_t(-1);
  std::map<size_t, std::vector<double>> best_;  // per task: best fitness after each verdict
  std::chrono::steady_clock::time_point started_, last_ranks_;
};

// One line per evaluator rank of the record's last session.
void print_rank_table(const store::sweep_record& record);

}  // namespace kevolve::app
