// The end-of-sweep summary, per task: best speedup (× PyTorch, the faster of
// eager and torch.compile, where PyTorch was timed; else × the baseline), its
// roofline fraction, evaluations, failures by status, time. The same table
// as text, Markdown and CSV, from a running sweep or any store.
#pragma once

#include <string>
#include <vector>

#include "store/sweep_record.h"

namespace kevolve::report {

struct task_summary {
  std::string task;
  std::string baseline;
  int64_t evaluations = 0;
  int64_t correct = 0;
  int64_t compile_only = 0;   // compiled for a device the evaluators lack: no speedup, not failures
  std::string failures;       // "compile_failed 2, wrong_result 1"
  double best_speedup = 0.0;  // fitness of the best node, 0 if none correct
  std::string fitness_over;   // what best_speedup is over: "× PyTorch (...)" or "× baseline (...)"
  bool over_torch() const { return fitness_over.rfind("× PyTorch", 0) == 0; }
  double best_vs_baseline = 0.0;  // the best node's geomean over the plain baseline; 0: none timed
  double best_roofline = 0.0;  // worst timed shape of the best node
  // The best node's worst timed shape against its attainable ceiling
  // (store::shape_measurement::attainable_fraction) and what bounds that
  // shape's ceiling; 0 and "": the backend has no ceiling.
  double best_attainable = 0.0;
  std::string best_bound;
  // The best node's geometric-mean speedup over PyTorch eager and
  // torch.compile at the timed shapes where they were measured; 0: none.
  double best_vs_eager = 0.0;
  double best_vs_compile = 0.0;
  int64_t best_node = -1;
  int64_t evaluations_to_90pct = 0;  // evaluations until 90% of the final best
  double seconds = 0.0;
  std::string stop_reason;
};

std::vector<task_summary> summarize(const store::sweep_record& r);

// Geometric mean of the best speedups of the tasks with a correct kernel, 0 if none.
double geomean_best_speedup(const std::vector<task_summary>& s);

std::string summary_text(const std::vector<task_summary>& s);
std::string summary_markdown(const std::vector<task_summary>& s);
std::string summary_csv(const std::vector<task_summary>& s);

}  // namespace kevolve::report
