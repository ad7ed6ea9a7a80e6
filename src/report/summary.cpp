#include "report/summary.h"

#include "report/text_table.h"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

namespace kevolve::report {

std::vector<task_summary> summarize(const store::sweep_record& r) {
  std::vector<task_summary> out;
  for (const auto& t : r.tasks) {
    task_summary s;
    s.task = t.id;
    s.baseline = t.baseline;
    s.fitness_over = t.fitness_over.empty() ? "× baseline (" + t.baseline + ")" : t.fitness_over;
    s.seconds = t.seconds_spent;
    s.stop_reason = t.stop_reason;
    std::map<std::string, int> failures;
    const auto& nodes = t.search.nodes.nodes();
    for (const auto& n : nodes) {
      if (n.id == search::kRoot || n.state != search::node_state::evaluated) continue;
      ++s.evaluations;
      if (n.ok()) {
        ++s.correct;
        if (n.fitness > s.best_speedup) {
          s.best_speedup = n.fitness;
          s.best_node = n.id;
        }
      } else if (n.result == eval::status::compile_only) {
        ++s.compile_only;
      } else {
        ++failures[eval::to_string(n.result)];
      }
    }
    for (const auto& [k, v] : failures) s.failures += (s.failures.empty() ? "" : ", ") + k + " " + std::to_string(v);
    // Evaluations (in the order they finished) until 90% of the final best.
    std::vector<const search::node*> done;
    for (const auto& n : nodes)
      if (n.id != search::kRoot && n.state == search::node_state::evaluated) done.push_back(&n);
    std::stable_sort(done.begin(), done.end(), [](auto* a, auto* b) { return a->finished_s < b->finished_s; });
    for (size_t i = 0; i < done.size(); ++i)
      if (done[i]->ok() && done[i]->fitness >= 0.9 * s.best_speedup && s.best_speedup > 0) {
        s.evaluations_to_90pct = int64_t(i + 1);
        break;
      }
    double worst = -1, worst_attainable = -1;
    double log_eager = 0, log_compile = 0, log_base = 0;
    int n_eager = 0, n_compile = 0, n_base = 0;
    for (const auto& m : t.measurements) {
      if (m.node != s.best_node || m.holdout) continue;
      worst = worst < 0 ? m.roofline_fraction : std::min(worst, m.roofline_fraction);
      if (m.attainable_fraction > 0 && (worst_attainable < 0 || m.attainable_fraction < worst_attainable)) {
        worst_attainable = m.attainable_fraction;
        s.best_bound = m.bound;
      }
      if (m.candidate_median_s <= 0) continue;
      if (m.baseline_median_s > 0) log_base += std::log(m.baseline_median_s / m.candidate_median_s), ++n_base;
      if (m.torch_eager_median_s > 0) log_eager += std::log(m.torch_eager_median_s / m.candidate_median_s), ++n_eager;
      if (m.torch_compile_median_s > 0) log_compile += std::log(m.torch_compile_median_s / m.candidate_median_s), ++n_compile;
    }
    s.best_roofline = std::max(0.0, worst);
    s.best_attainable = std::max(0.0, worst_attainable);
    s.best_vs_eager = n_eager ? std::exp(log_eager / n_eager) : 0.0;
    s.best_vs_baseline = n_base ? std::exp(log_base / n_base) : 0.0;
    s.best_vs_compile = n_compile ? std::exp(log_compile / n_compile) : 0.0;
    out.push_back(std::move(s));
  }
  return out;
}

namespace {

bool any_ceiling(const std::vector<task_summary>& s) {
  return std::any_of(s.begin(), s.end(), [](const task_summary& t) { return t.best_attainable > 0; });
}

bool any_torch(const std::vector<task_summary>& s) {
  return std::any_of(s.begin(), s.end(), [](const task_summary& t) { return t.best_vs_eager > 0 || t.best_vs_compile > 0; });
}

std::string times(double x) { return x > 0 ? fmt::format("{:.2f}x", x) : "-"; }

// The PyTorch columns appear when some task has PyTorch times; the
// attainable ceiling's beside the roofline when some task has one.
std::vector<std::vector<std::string>> rows(const std::vector<task_summary>& s) {
  const bool torch = any_torch(s), ceiling = any_ceiling(s);
  std::vector<std::vector<std::string>> r = {{"task", "best speedup", "over", "vs baseline", "roofline", "evaluations",
                                              "correct", "to 90% of best", "failures", "time", "stopped because"}};
  if (ceiling) r[0].insert(r[0].begin() + 5, {"attainable", "bound"});
  if (torch) r[0].insert(r[0].begin() + 4, {"vs torch eager", "vs torch.compile"});
  for (const auto& t : s) {
    r.push_back({t.task,
                 t.best_speedup > 0 || t.compile_only == 0 ? times(t.best_speedup)
                                                           : fmt::format("- ({} compile_only: not run)", t.compile_only),
                 t.over_torch() ? "PyTorch" : "baseline", times(t.best_vs_baseline),
                 t.best_speedup > 0 ? fmt::format("{:.0f}%", t.best_roofline * 100) : "-", std::to_string(t.evaluations),
                 std::to_string(t.correct), t.evaluations_to_90pct ? std::to_string(t.evaluations_to_90pct) : "-",
                 t.failures.empty() ? "-" : t.failures, fmt::format("{:.0f} s", t.seconds),
                 t.stop_reason.empty() ? "(running)" : t.stop_reason});
    if (ceiling)
      r.back().insert(r.back().begin() + 5, {t.best_attainable > 0 ? fmt::format("{:.1f}%", t.best_attainable * 100) : "-",
                                             t.best_bound.empty() ? "-" : t.best_bound});
    if (torch) r.back().insert(r.back().begin() + 4, {times(t.best_vs_eager), times(t.best_vs_compile)});
  }
  return r;
}

}  // namespace

double geomean_best_speedup(const std::vector<task_summary>& s) {
  double sum = 0;
  int n = 0;
  for (const auto& t : s)
    if (t.best_speedup > 0) {
      sum += std::log(t.best_speedup);
      ++n;
    }
  return n ? std::exp(sum / n) : 0.0;
}

// One line per yardstick: the tasks whose best speedups are × PyTorch,
// then those × their baseline (where PyTorch is not timed).
static std::string headline(const std::vector<task_summary>& s) {
  std::string out;
  for (const bool torch : {true, false}) {
    std::vector<task_summary> group;
    for (const auto& t : s)
      if (t.over_torch() == torch) group.push_back(t);
    if (group.empty()) continue;
    int beaten = 0, with_base = 0;
    double log_base = 0;
    for (const auto& t : group) {
      beaten += t.best_speedup > 1.0;
      if (t.best_vs_baseline > 0) log_base += std::log(t.best_vs_baseline), ++with_base;
    }
    const double g = geomean_best_speedup(group);
    const bool mixed = group.size() != s.size();
    const std::string over = torch ? "PyTorch (the faster of eager and torch.compile)"
                                   : mixed ? "their baseline (where PyTorch is not timed)" : "their baseline";
    out += fmt::format("{} of {} tasks beat {}; geometric mean of the best speedups: {}", beaten, group.size(), over,
                       g > 0 ? fmt::format("{:.2f}x", g) : std::string("none (no task has a kernel that ran correctly)"));
    if (torch && g > 0)
      out += with_base ? fmt::format(" (× PyTorch; × the plain baselines: {:.2f}x)", std::exp(log_base / with_base)) : " (× PyTorch)";
    out += "\n";
  }
  return out;
}

std::string summary_text(const std::vector<task_summary>& s) {
  std::string out = text_table(rows(s));
  int64_t compile_only = 0;
  for (const auto& t : s) compile_only += t.compile_only;
  out += "\n" + headline(s);
  if (compile_only > 0)
    out += fmt::format("{} kernels were compile_only: compiled and checked for a device no evaluator has, never run, "
                       "no speedup\n", compile_only);
  return out;
}

std::string summary_markdown(const std::vector<task_summary>& s) {
  const auto r = rows(s);
  std::string out;
  for (size_t k = 0; k < r.size(); ++k) {
    out += "|";
    for (const auto& c : r[k]) out += " " + c + " |";
    out += "\n";
    if (k == 0) {
      out += "|";
      for (size_t i = 0; i < r[k].size(); ++i) out += "---|";
      out += "\n";
    }
  }
  out += "\n" + headline(s);
  return out;
}

std::string summary_csv(const std::vector<task_summary>& s) {
  const bool torch = any_torch(s), ceiling = any_ceiling(s);
  std::string out = "task,baseline,best_speedup,fitness_over,best_vs_baseline,best_roofline_fraction,evaluations,correct,evaluations_to_90pct,failures,seconds,stop_reason,compile_only";
  out += torch ? ",best_vs_torch_eager,best_vs_torch_compile" : "";
  out += ceiling ? ",best_attainable_fraction,best_bound\n" : "\n";
  auto q = [](const std::string& x) {
    std::string y = "\"";
    for (char c : x) y += c == '"' ? std::string("\"\"") : std::string(1, c);
    return y + "\"";
  };
  for (const auto& t : s) {
    out += fmt::format("{},{},{:.4f},{},{:.4f},{:.4f},{},{},{},{},{:.1f},{},{}", q(t.task), q(t.baseline), t.best_speedup,
                       q(t.fitness_over), t.best_vs_baseline, t.best_roofline, t.evaluations, t.correct, t.evaluations_to_90pct, q(t.failures), t.seconds,
                       q(t.stop_reason), t.compile_only);
    out += torch ? fmt::format(",{:.4f},{:.4f}", t.best_vs_eager, t.best_vs_compile) : "";
    out += ceiling ? fmt::format(",{:.4f},{}\n", t.best_attainable, q(t.best_bound)) : "\n";
  }
  return out;
}

}  // namespace kevolve::report
