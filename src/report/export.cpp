#include "report/export.h"

#include <map>

#include <nlohmann/json.hpp>

#include "eval/status.h"

namespace kevolve::report {
using json = nlohmann::json;

namespace {

bool keep(const store::task_record& t, const export_filter& f) {
  return (f.op.empty() || t.op == f.op) && (f.backend.empty() || t.backend == f.backend);
}

json messages_of(const store::llm_exchange& x) {
  json m = json::parse(x.prompt, nullptr, false);
  return m.is_array() ? m : json::array();
}

json task_meta(const store::task_record& t) {
  return {{"task", t.id}, {"operator", t.op}, {"variant", t.variant}, {"backend", t.backend}, {"baseline", t.baseline}};
}

// The last ok exchange of each node (the reply that became its code).
std::map<int64_t, const store::llm_exchange*> replies(const store::task_record& t) {
  std::map<int64_t, const store::llm_exchange*> out;
  for (const auto& x : t.llm)
    if (x.status == "ok" && x.purpose == "kernel") out[x.node] = &x;
  return out;
}

// Per node, its profiled shapes: shape, the backend's profile line and the
// hardware counters (the evaluator's state at each step, for training).
std::map<int64_t, json> profiles_of(const store::task_record& t) {
  std::map<int64_t, json> out;
  for (const auto& m : t.measurements)
    if (!m.profile.empty() || !m.metrics.empty())
      out[m.node].push_back({{"shape", m.shape}, {"profile", m.profile}, {"metrics", m.metrics}});
  return out;
}

std::string line(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace) + "\n"; }

}  // namespace

expected<std::string> export_jsonl(const store::sweep_record& r, const std::string& format, const export_filter& f) {
  if (format != "sft" && format != "dpo" && format != "trajectory")
    return make_error(errc::invalid_input, "--format: expected sft, dpo or trajectory, got '" + format + "'");
  std::string out;
  for (const auto& t : r.tasks) {
    if (!keep(t, f)) continue;
    const auto& nodes = t.search.nodes.nodes();
    const auto by_node = replies(t);
    if (format == "sft") {
      for (const auto& [id, x] : by_node) {
        const search::node& n = nodes[size_t(id)];
        const search::node& p = nodes[size_t(n.parent)];
        const double parent_fitness = p.ok() ? p.fitness : 0.0;
        if (!n.ok() || n.fitness < f.min_fitness || n.fitness <= parent_fitness) continue;
        json m = messages_of(*x);
        m.push_back({{"role", "assistant"}, {"content", x->reply}});
        json meta = task_meta(t);
        meta.update({{"node", id}, {"parent", n.parent}, {"fitness", n.fitness}, {"parent_fitness", parent_fitness},
                     {"model", x->model}, {"prompt_tokens", x->prompt_tokens}, {"completion_tokens", x->completion_tokens}});
        out += line({{"messages", m}, {"metadata", meta}});
      }
    } else if (format == "dpo") {
      std::map<int64_t, std::vector<int64_t>> by_parent;  // evaluated LLM-written children
      for (const auto& [id, x] : by_node)
        if (nodes[size_t(id)].state == search::node_state::evaluated) by_parent[nodes[size_t(id)].parent].push_back(id);
      for (const auto& [parent, kids] : by_parent) {
        for (int64_t a : kids)
          for (int64_t b : kids) {
            const search::node &na = nodes[size_t(a)], &nb = nodes[size_t(b)];
            if (!na.ok() || na.fitness < f.min_fitness || na.fitness <= nb.fitness) continue;
            json meta = task_meta(t);
            meta.update({{"parent", parent}, {"chosen_node", a}, {"rejected_node", b}, {"chosen_fitness", na.fitness},
                         {"rejected_fitness", nb.fitness}, {"rejected_status", eval::to_string(nb.result)}});
            out += line({{"prompt", messages_of(*by_node.at(a))},
                         {"chosen", by_node.at(a)->reply},
                         {"rejected", by_node.at(b)->reply},
                         {"metadata", meta}});
          }
      }
    } else {
      if (t.search.best_fitness < f.min_fitness) continue;
      json steps = json::array();
      const auto profiles = profiles_of(t);
      double best = 0;
      for (const auto& n : nodes) {
        if (n.id == search::kRoot) continue;
        const double fit = n.ok() ? n.fitness : 0.0;
        const double reward = n.state == search::node_state::evaluated ? std::max(0.0, fit - best) : 0.0;
        if (n.state == search::node_state::evaluated) best = std::max(best, fit);
        json s = {{"node", n.id}, {"parent", n.parent}, {"depth", n.depth}, {"mode", search::to_string(n.mode)},
                  {"origin", n.origin}, {"state", n.state == search::node_state::evaluated ? "evaluated" : "pending"},
                  {"status", eval::to_string(n.result)}, {"fitness", n.fitness}, {"reward", reward},
                  {"reason", n.reason}, {"code", n.code}};
        if (auto it = profiles.find(n.id); it != profiles.end()) s["profiles"] = it->second;
        if (auto it = by_node.find(n.id); it != by_node.end())
          s["llm"] = {{"model", it->second->model}, {"prompt_tokens", it->second->prompt_tokens},
                      {"completion_tokens", it->second->completion_tokens}, {"latency_s", it->second->latency_s}};
        steps.push_back(std::move(s));
      }
      json j = task_meta(t);
      j.update({{"best_fitness", t.search.best_fitness}, {"evaluations", t.search.evaluations}, {"steps", steps}});
      out += line(j);
    }
  }
  return out;
}

}  // namespace kevolve::report
