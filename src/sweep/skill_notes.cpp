#include "sweep/skill_notes.h"

#include <cstdio>
#include <map>

#include <nlohmann/json.hpp>

#include "sweep/node_diagnosis.h"
#include "synth/prompt_builder.h"

namespace kevolve::sweep {
namespace {

using nlohmann::json;

// The node's verdict as the synthesizer is shown it, with what its timed
// shapes say (node_diagnosis.h).
synth::context_item item_of(const store::task_record& task, const search::node& n) {
  synth::context_item c;
  c.id = n.id;
  c.code = n.code;
  c.result = n.result;
  c.fitness = n.fitness;
  c.reason = n.reason;
  node_diagnosis diagnosis;
  for (const auto& m : task.measurements)
    if (m.node == n.id) diagnosis.add(m);
  diagnosis.describe(c);
  return c;
}

std::string fixed(double v, const char* format) {
  char buf[48];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

json node_evidence(const store::task_record& task, const search::node& n) {
  json shapes = json::array();
  for (const auto& m : task.measurements) {
    if (m.node != n.id) continue;
    json shape = {{"shape", m.shape},
                  {"holdout", m.holdout},
                  {"status", m.status},
                  {"median_s", m.candidate_median_s},
                  {"baseline_median_s", m.baseline_median_s},
                  {"speedup", m.speedup},
                  {"achieved_gbs", m.achieved_gbs},
                  {"achieved_gflops", m.achieved_gflops},
                  {"roofline_fraction", m.roofline_fraction},
                  {"bottleneck", m.bottleneck}};
    if (!m.profile.empty()) shape["profile"] = m.profile;
    if (!m.metrics.empty()) shape["metrics"] = m.metrics;
    shapes.push_back(std::move(shape));
  }
  return {{"node", n.id}, {"origin", n.origin}, {"status", eval::to_string(n.result)}, {"fitness", n.fitness},
          {"shapes", shapes}};
}

}  // namespace

synth::note_request make_note_request(const store::task_record& task, const search::tree& tree, search::node_id child,
                                      const spec::operator_spec& op, const spec::variant* variant) {
  const search::node& c = tree.at(child);
  const search::node& p = tree.at(c.parent);
  synth::note_request r;
  r.task = task.id;
  r.op = &op;
  r.variant = variant;
  r.backend = task.backend;
  r.hardware = synth::default_hardware(task.backend);
  r.parent = item_of(task, p);
  r.child = item_of(task, c);
  r.parent_origin = p.origin;
  r.child_origin = c.origin;
  // Timed shapes: the parent's then the child's median and speedup.
  std::map<std::string, std::pair<const store::shape_measurement*, const store::shape_measurement*>> shapes;
  for (const auto& m : task.measurements) {
    if (m.holdout) continue;
    if (m.node == p.id) shapes[m.shape].first = &m;
    if (m.node == c.id) shapes[m.shape].second = &m;
  }
  auto side = [](const store::shape_measurement* m) {
    return m ? fixed(m->candidate_median_s * 1e6, "%.1f us") + " (" + fixed(m->speedup, "%.2fx") + ", " + m->bottleneck + ")"
             : std::string("-");
  };
  for (const auto& [shape, pc] : shapes)
    r.measurements += "- " + shape + ": parent " + side(pc.first) + ", child " + side(pc.second) + "\n";
  return r;
}

std::optional<store::skill_note> make_skill_note(const store::task_record& task, const search::tree& tree,
                                                 search::node_id child, const spec::operator_spec& op,
                                                 const synth::note_result& result, int64_t exchange) {
  if (result.status != "accepted" && result.status != "refused") return std::nullopt;
  const search::node& c = tree.at(child);
  const search::node& p = tree.at(c.parent);
  store::skill_note k;
  k.node = c.id;
  k.parent = p.id;
  k.exchange = exchange;
  k.accepted = result.status == "accepted";
  k.parent_fitness = p.ok() ? p.fitness : 0.0;
  k.child_fitness = c.fitness;
  k.note = result.note;
  k.reason = result.reason;
  k.hardware = synth::default_hardware(task.backend);
  const json evidence = {{"operator", task.op},
                         {"variant", task.variant},
                         {"class", op.op_class},
                         {"backend", task.backend},
                         {"hardware", k.hardware},
                         {"model", result.calls.empty() ? std::string() : result.calls.back().model},
                         {"parent", node_evidence(task, p)},
                         {"child", node_evidence(task, c)}};
  k.evidence = evidence.dump(-1, ' ', false, json::error_handler_t::replace);
  return k;
}

}  // namespace kevolve::sweep
