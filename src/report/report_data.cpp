#include "report/report_data.h"

#include <algorithm>
#include <cctype>
#include <map>

#include "report/summary.h"

namespace kevolve::report {
namespace {

using nlohmann::json;

constexpr size_t kReasonPreview = 200;   // characters of a reason in the tree's data
constexpr size_t kGroupNodes = 50;       // node ids listed per failure group

std::string first_line(const std::string& s, size_t max) {
  std::string line = s.substr(0, s.find('\n'));
  if (line.size() > max) line = line.substr(0, max) + "...";
  return line;
}

bool timed(const store::shape_measurement& m) { return !m.holdout && m.candidate_median_s > 0; }

// The llm synthesizer's spending on a task: requests by status, tokens, cost.
json llm_totals_json(const store::task_record& t) {
  std::map<std::string, int64_t> by_status;
  int64_t prompt_tokens = 0, completion_tokens = 0;
  double cost = 0, latency = 0;
  for (const auto& x : t.llm) {
    ++by_status[x.status];
    prompt_tokens += x.prompt_tokens;
    completion_tokens += x.completion_tokens;
    cost += x.cost;
    latency += x.latency_s;
  }
  return {{"requests", t.llm.size()},
          {"by_status", by_status},
          {"prompt_tokens", prompt_tokens},
          {"completion_tokens", completion_tokens},
          {"cost", cost},
          {"latency_s", latency}};
}

// One exchange for the node panel. The prompt is stored as the JSON array
// of messages sent; one that does not parse as such (never written by
// kevolve) is shown as one message holding the stored text.
json llm_exchange_json(const store::llm_exchange& x) {
  json messages = json::parse(x.prompt, nullptr, false);
  const bool is_messages = messages.is_array() && std::all_of(messages.begin(), messages.end(), [](const json& m) {
    return m.is_object() && m.contains("role") && m.contains("content");
  });
  if (!is_messages) {
    const json whole = {{"role", "(stored text)"}, {"content", x.prompt}};
    messages = json::array();
    messages.push_back(whole);
  }
  json documents = json::array();
  for (size_t at = 0; at < x.documents.size();) {
    size_t end = x.documents.find('\n', at);
    if (end == std::string::npos) end = x.documents.size();
    if (end > at) documents.push_back(x.documents.substr(at, end - at));
    at = end + 1;
  }
  return {{"node", x.node},
          {"endpoint", x.endpoint},
          {"model", x.model},
          {"status", x.status},
          {"error", x.error},
          {"messages", std::move(messages)},
          {"reply", x.reply},
          {"documents", std::move(documents)},
          {"attempts", x.attempts},
          {"prompt_tokens", x.prompt_tokens},
          {"completion_tokens", x.completion_tokens},
          {"tokens_estimated", x.tokens_estimated != 0},
          {"latency_s", x.latency_s},
          {"total_s", x.total_s},
          {"cost", x.cost},
          {"prompt_ms", x.prompt_ms}};
}

json summary_json(const task_summary& s, const store::task_record& t) {
  std::map<std::string, int64_t> failures;
  for (const auto& n : t.search.nodes.nodes())
    if (n.id != search::kRoot && n.state == search::node_state::evaluated && !n.ok() &&
        n.result != eval::status::compile_only)
      ++failures[eval::to_string(n.result)];
  return {{"task", s.task},
          {"baseline", s.baseline},
          {"best_speedup", s.best_speedup},
          {"fitness_over", s.fitness_over},
          {"best_roofline_fraction", s.best_roofline},
          {"best_attainable_fraction", s.best_attainable},
          {"best_bound", s.best_bound},
          {"best_vs_torch_eager", s.best_vs_eager},
          {"best_vs_torch_compile", s.best_vs_compile},
          {"evaluations", s.evaluations},
          {"correct", s.correct},
          {"evaluations_to_90pct", s.evaluations_to_90pct},
          {"failures", failures},
          {"compile_only", s.compile_only},
          {"failures_text", s.failures},
          {"seconds", s.seconds},
          {"stop_reason", s.stop_reason},
          {"best_node", s.best_node},
          {"llm", llm_totals_json(t)}};
}

json nodes_json(const store::task_record& t, json& origins_out) {
  json parent = json::array(), depth = json::array(), mode = json::array(), state = json::array(),
       status = json::array(), fitness = json::array(), created = json::array(), finished = json::array(),
       origin = json::array(), reason = json::array(), context = json::array(), visits = json::array();
  std::map<std::string, int> origin_index;
  std::vector<std::string> origins;
  for (const auto& n : t.search.nodes.nodes()) {
    parent.push_back(n.parent);
    depth.push_back(n.depth);
    mode.push_back(int(n.mode));
    state.push_back(int(n.state));
    status.push_back(int(n.result));
    fitness.push_back(n.fitness);
    created.push_back(n.created_s);
    finished.push_back(n.finished_s);
    auto [it, added] = origin_index.emplace(n.origin, int(origins.size()));
    if (added) origins.push_back(n.origin);
    origin.push_back(it->second);
    reason.push_back(first_line(n.reason, kReasonPreview));
    context.push_back(n.context);
    visits.push_back(n.visits);
  }
  origins_out = origins;
  return {{"parent", parent},   {"depth", depth},       {"mode", mode},       {"state", state},
          {"status", status},   {"fitness", fitness},   {"created_s", created}, {"finished_s", finished},
          {"origin", origin},   {"reason", reason},     {"context", context}, {"visits", visits}};
}

json measurements_json(const store::task_record& t) {
  json rows = json::array();
  for (const auto& m : t.measurements)
    rows.push_back({m.node, m.shape, m.holdout, m.status, m.max_abs_error, m.candidate_median_s, m.candidate_p10_s,
                    m.candidate_p90_s, m.baseline_median_s, m.speedup, m.achieved_gbs, m.achieved_gflops,
                    m.roofline_fraction, m.bottleneck, m.torch_eager_median_s, m.torch_compile_median_s, m.profile,
                    m.metrics.empty() ? json(nullptr) : json(m.metrics), m.attainable_fraction, m.bound});
  return rows;
}

// Evaluated nodes in the order they finished (as summarize() counts them).
json eval_order_json(const store::task_record& t) {
  std::vector<const search::node*> done;
  for (const auto& n : t.search.nodes.nodes())
    if (n.id != search::kRoot && n.state == search::node_state::evaluated) done.push_back(&n);
  std::stable_sort(done.begin(), done.end(), [](auto* a, auto* b) { return a->finished_s < b->finished_s; });
  json order = json::array();
  for (auto* n : done) order.push_back(n->id);
  return order;
}

json failure_groups_json(const store::task_record& t) {
  struct group {
    std::string status, pattern, example;
    int64_t count = 0;
    std::vector<int64_t> nodes;
  };
  std::map<std::pair<std::string, std::string>, group> groups;
  for (const auto& n : t.search.nodes.nodes()) {
    if (n.id == search::kRoot || n.state != search::node_state::evaluated || n.ok()) continue;
    const std::string status = eval::to_string(n.result), pattern = reason_pattern(n.reason);
    group& g = groups[{status, pattern}];
    if (g.count++ == 0) {
      g.status = status;
      g.pattern = pattern;
      g.example = first_line(n.reason, 400);
    }
    if (g.nodes.size() < kGroupNodes) g.nodes.push_back(n.id);
  }
  std::vector<group> sorted;
  for (auto& [k, g] : groups) sorted.push_back(std::move(g));
  std::stable_sort(sorted.begin(), sorted.end(), [](const group& a, const group& b) { return a.count > b.count; });
  json out = json::array();
  for (const auto& g : sorted)
    out.push_back({{"status", g.status}, {"pattern", g.pattern}, {"example", g.example}, {"count", g.count}, {"nodes", g.nodes}});
  return out;
}

}  // namespace

std::string reason_pattern(const std::string& reason) {
  const std::string line = reason.substr(0, reason.find('\n'));
  std::string out;
  for (size_t i = 0; i < line.size();) {
    const auto c = static_cast<unsigned char>(line[i]);
    const bool starts_number = std::isdigit(c) || ((c == '-' || c == '.') && i + 1 < line.size() &&
                                                   std::isdigit(static_cast<unsigned char>(line[i + 1])));
    const bool in_word = i > 0 && (std::isalnum(static_cast<unsigned char>(line[i - 1])) || line[i - 1] == '_');
    if (starts_number && !in_word) {  // 0.31, -2, 1e-05, 0x1f; but not the 2 of "fp32" or "x86_64"
      ++i;
      while (i < line.size() && (std::isalnum(static_cast<unsigned char>(line[i])) || line[i] == '.' ||
                                 ((line[i] == '-' || line[i] == '+') && (line[i - 1] == 'e' || line[i - 1] == 'E'))))
        ++i;
      out += '#';
    } else {
      out += line[i++];
    }
  }
  if (out.size() > 160) out = out.substr(0, 160) + "...";
  return out;
}

implied_roofline implied_peaks(const store::sweep_record& r, const std::string& backend) {
  implied_roofline p;
  std::vector<std::pair<double, double>> roofs;  // (GB/s roof, GFLOP/s roof) at each timed shape
  for (const auto& t : r.tasks) {
    if (t.backend != backend) continue;
    for (const auto& m : t.measurements)
      if (timed(m) && m.roofline_fraction > 0 && m.achieved_gbs > 0)
        roofs.emplace_back(m.achieved_gbs / m.roofline_fraction, m.achieved_gflops / m.roofline_fraction);
  }
  for (const auto& [gbs, gflops] : roofs) p.peak_gbs = std::max(p.peak_gbs, gbs);
  for (const auto& [gbs, gflops] : roofs)
    if (gflops > 0 && gbs < 0.999 * p.peak_gbs) p.peak_gflops = std::max(p.peak_gflops, gflops);
  return p;
}

json report_data(const store::sweep_record& r, const std::string& store_name) {
  const auto summaries = summarize(r);
  json statuses = json::array();
  for (int s = 0; s <= int(eval::kLastStatus); ++s) statuses.push_back(eval::to_string(eval::status(s)));
  json modes = json::array();
  for (auto m : {search::memory_mode::inherit, search::memory_mode::compare_siblings, search::memory_mode::merge,
                 search::memory_mode::reset})
    modes.push_back(search::to_string(m));

  json summary = json::array(), tasks = json::array(), rooflines = json::object();
  for (size_t i = 0; i < r.tasks.size(); ++i) {
    const auto& t = r.tasks[i];
    summary.push_back(summary_json(summaries[i], t));
    if (!rooflines.contains(t.backend)) {
      const auto p = implied_peaks(r, t.backend);
      rooflines[t.backend] = {{"peak_gbs", p.peak_gbs}, {"peak_gflops", p.peak_gflops}};
    }
    json origins;
    json nodes = nodes_json(t, origins);
    const auto best = summaries[i].best_node;
    tasks.push_back({{"id", t.id},
                     {"op", t.op},
                     {"variant", t.variant},
                     {"backend", t.backend},
                     {"baseline", t.baseline},
                     {"node_count", t.search.nodes.size()},
                     {"nodes", std::move(nodes)},
                     {"origins", std::move(origins)},
                     {"best_node", best},
                     {"best_path", best >= 0 ? t.search.nodes.path(best, true) : std::vector<search::node_id>{}},
                     {"eval_order", eval_order_json(t)},
                     {"measurements", measurements_json(t)},
                     {"failure_groups", failure_groups_json(t)}});
  }
  int beaten = 0;
  for (const auto& s : summaries) beaten += s.best_speedup > 1.0;
  return {{"format", 1},
          {"store", store_name},
          {"kevolve_version", r.kevolve_version},
          {"created_at", r.created_at},
          {"config_yaml", r.config_yaml},
          {"statuses", statuses},
          {"modes", modes},
          {"measurement_fields",
           {"node", "shape", "holdout", "status", "max_abs_error", "candidate_median_s", "candidate_p10_s",
            "candidate_p90_s", "baseline_median_s", "speedup", "achieved_gbs", "achieved_gflops", "roofline_fraction",
            "bottleneck", "torch_eager_median_s", "torch_compile_median_s", "profile", "metrics", "attainable_fraction",
            "bound"}},
          {"tasks_beating_baseline", beaten},
          {"geomean_speedup", geomean_best_speedup(summaries)},
          {"rooflines", rooflines},
          {"summary", summary},
          {"tasks", tasks}};
}

json report_code(const store::sweep_record& r) {
  json out = json::array();
  for (const auto& t : r.tasks) {
    json code = json::array(), reason = json::array(), llm = json::array();
    for (const auto& n : t.search.nodes.nodes()) {
      code.push_back(n.code);
      reason.push_back(n.reason);
    }
    for (const auto& x : t.llm) llm.push_back(llm_exchange_json(x));
    out.push_back({{"code", std::move(code)}, {"reason", std::move(reason)}, {"llm", std::move(llm)}});
  }
  return out;
}

}  // namespace kevolve::report
