#include "store/record_check.h"

#include <cmath>
#include <cstdint>

namespace kevolve::store {
namespace {

using search::node;
using search::node_id;

std::string node_text(size_t k) { return "node " + std::to_string(k); }

std::string check_name(const char* what, const std::string& value) {
  if (value.find('\0') != std::string::npos) return std::string("'") + what + "' contains a NUL byte";
  return "";
}

}  // namespace

void link_children(std::vector<node>& nodes) {
  for (node& n : nodes) n.children.clear();
  for (size_t k = 1; k < nodes.size(); ++k) {
    const node_id p = nodes[k].parent;
    if (p >= 0 && p < node_id(k)) nodes[size_t(p)].children.push_back(node_id(k));
  }
}

std::string check_task(const task_record& t) {
  for (auto [what, value] : {std::pair<const char*, const std::string*>{"id", &t.id},
                             {"operator", &t.op},
                             {"variant", &t.variant},
                             {"backend", &t.backend},
                             {"baseline", &t.baseline},
                             {"stop_reason", &t.stop_reason}})
    if (auto bad = check_name(what, *value); !bad.empty()) return bad;

  const std::vector<node>& nodes = t.search.nodes.nodes();
  const node_id n = node_id(nodes.size());
  if (nodes.empty()) return "no nodes, expected at least the root";
  std::vector<size_t> child_count(nodes.size(), 0);
  for (size_t k = 0; k < nodes.size(); ++k) {
    const node& x = nodes[k];
    if (x.id != node_id(k)) return node_text(k) + " has id " + std::to_string(x.id) + ", expected " + std::to_string(k);
    if (k == 0 && x.parent != search::kNoNode)
      return "the root (node 0) has parent " + std::to_string(x.parent) + ", expected -1";
    if (k > 0 && (x.parent < 0 || x.parent >= node_id(k)))
      return node_text(k) + " has parent " + std::to_string(x.parent) + ", expected a node before it (0.." +
             std::to_string(k - 1) + ")";
    if (int(x.mode) < 0 || int(x.mode) > int(search::memory_mode::reset))
      return node_text(k) + " has memory mode " + std::to_string(int(x.mode)) + ", expected 0..3";
    if (int(x.state) < 0 || int(x.state) > int(search::node_state::evaluated))
      return node_text(k) + " has state " + std::to_string(int(x.state)) + ", expected 0 (pending) or 1 (evaluated)";
    if (int(x.result) < 0 || int(x.result) > int(eval::kLastStatus))
      return node_text(k) + " has status " + std::to_string(int(x.result)) + ", expected 0.." + std::to_string(int(eval::kLastStatus));
    for (node_id c : x.context)
      if (c < 0 || c >= n)
        return node_text(k) + " has context entry " + std::to_string(c) + ", expected a node of the task (0.." +
               std::to_string(n - 1) + ")";
    if (k > 0) ++child_count[size_t(x.parent)];
  }
  // Children are not stored: they must be what the parents say, in id order.
  for (size_t k = 0; k < nodes.size(); ++k) {
    const std::vector<node_id>& ch = nodes[k].children;
    bool ok = ch.size() == child_count[k];
    for (size_t j = 0; ok && j < ch.size(); ++j)
      ok = ch[j] > 0 && ch[j] < n && nodes[size_t(ch[j])].parent == node_id(k) && (j == 0 || ch[j] > ch[j - 1]);
    if (!ok) return node_text(k) + "'s children are not the nodes whose parent it is, in increasing id order";
  }
  for (size_t m = 0; m < t.measurements.size(); ++m) {
    const node_id x = t.measurements[m].node;
    if (x < 0 || x >= n)
      return "measurement " + std::to_string(m) + " is of node " + std::to_string(x) + ", expected a node of the task (0.." +
             std::to_string(n - 1) + ")";
    for (const auto& [name, value] : t.measurements[m].metrics)
      if (!std::isfinite(value))
        return "measurement " + std::to_string(m) + " has metric '" + name + "' = " + std::to_string(value) +
               ", expected a finite number";
  }
  for (size_t k = 0; k < t.llm.size(); ++k) {
    const node_id x = t.llm[k].node;
    if (x < 1 || x >= n)
      return "llm exchange " + std::to_string(k) + " is of node " + std::to_string(x) + ", expected a node of the task (1.." +
             std::to_string(n - 1) + ")";
    if (t.llm[k].purpose != "kernel" && t.llm[k].purpose != "skill_note")
      return "llm exchange " + std::to_string(k) + " has purpose '" + t.llm[k].purpose + "', expected kernel or skill_note";
  }
  for (size_t k = 0; k < t.skills.size(); ++k) {
    const skill_note& s = t.skills[k];
    const std::string what = "skill " + std::to_string(k);
    if (s.node < 1 || s.node >= n || s.parent < 1 || s.parent >= n || nodes[size_t(s.node)].parent != s.parent)
      return what + " is of node " + std::to_string(s.node) + " from parent " + std::to_string(s.parent) +
             ", expected a node of the task (1.." + std::to_string(n - 1) + ") and its parent";
    if (s.exchange < -1 || s.exchange >= int64_t(t.llm.size()))
      return what + " names llm exchange " + std::to_string(s.exchange) + ", expected -1 or 0.." +
             std::to_string(int64_t(t.llm.size()) - 1);
  }
  return "";
}

std::string check_record(const sweep_record& r) {
  for (auto [what, value] : {std::pair<const char*, const std::string*>{"kevolve_version", &r.kevolve_version},
                             {"config_yaml", &r.config_yaml},
                             {"config_hash", &r.config_hash},
                             {"created_at", &r.created_at}})
    if (auto bad = check_name(what, *value); !bad.empty()) return bad;
  for (size_t i = 0; i < r.tasks.size(); ++i)
    if (auto bad = check_task(r.tasks[i]); !bad.empty())
      return "task " + std::to_string(i) + " (\"" + r.tasks[i].id + "\"): " + bad;
  return "";
}

}  // namespace kevolve::store
