// Records for the store tests: realistic ones grown by the real search engine
// (failed nodes with reasons, pending nodes, odd strings), large synthetic
// ones, and field-by-field comparisons that name the first difference.
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "common/fs.h"
#include "search/engine.h"
#include "store/sweep_record.h"

namespace kevolve::store::testing {

using search::expansion;
using search::node;
using search::node_id;
using search::search_config;
using search::search_engine;

// The verdict the tests give node `id`: every kind of failure appears.
struct test_verdict {
  eval::status result;
  double fitness;
  std::string reason;
};
// A scratch directory for one test's stores, removed with it.
inline temp_dir make_dir(const std::string& prefix = "kevolve-store-test-") {
  auto d = temp_dir::create(prefix);
  EXPECT_TRUE(d.has_value()) << (d ? "" : d.error().message);
  return std::move(*d);
}

inline test_verdict verdict_for(node_id id) {
  if (id % 7 == 3)
    return {eval::status::compile_failed, 0.0,
            "kernel.cpp:12:5: error: expected ';' before '}' token\n   12 |   }\n      |   ^\n"};
  if (id % 11 == 5) return {eval::status::wrong_result, 0.0, "shape M=64 N=48: max |error| 3.2e-2 > atol 1e-5 — µ-check"};
  if (id % 13 == 0) return {eval::status::timeout, 0.0, ""};
  if (id % 17 == 1) return {eval::status::crashed, 0.0, "signal 11 (SIGSEGV)\n"};
  return {eval::status::ok, 1.0 + double(id % 19) / 3.0 + 1e-310, ""};
}

// A candidate's source, with the oddities a store must keep: newlines, tabs,
// UTF-8, an embedded NUL, trailing whitespace.
inline std::string code_for(node_id id) {
  std::string s = "// candidate " + std::to_string(id) + " — θ=0.5, 🚀\n#include <cstddef>\n";
  s += "extern \"C\" void kernel(const float* x, float* y, size_t n) {\n\tfor (size_t i = 0; i < n; ++i)\n";
  s += "\t\ty[i] = x[i] * " + std::to_string(id) + ".0f;\n}\n";
  if (id % 9 == 4) s += std::string("/* NUL here:") + '\0' + "*/\n";
  if (id % 10 == 6) s += "   \n\n";
  return s;
}

struct grown_task {
  task_record record;
  search_config config;
  search_engine engine;  // the engine the record's snapshot was taken from
};

inline search_engine make_engine(const search_config& c) {
  auto e = search_engine::create(c);
  EXPECT_TRUE(e.has_value()) << (e ? "" : e.error().message);
  return std::move(*e);
}

// Grows a tree with the real engine until `evaluations` verdicts are in,
// then leaves `max_in_flight` expansions pending (the last one without code,
// as when the synthesizer has not answered yet).
inline grown_task grow_task(const std::string& op, const std::string& policy, uint64_t seed, int evaluations) {
  search_config c;
  c.policy.name = policy;
  c.stop.max_evaluations = evaluations + 100;
  c.max_in_flight = 4;
  c.seed = seed;
  search_engine e = make_engine(c);
  std::deque<expansion> pending;
  double now = 0.0;
  while (e.progress(now).evaluations < evaluations) {
    while (auto x = e.next(now)) {
      e.set_code(x->child, x->child % 2 ? "builtin" : "llm:qwen2.5-coder", code_for(x->child));
      pending.push_back(*x);
      now += 0.25;
    }
    const expansion x = pending.front();
    pending.pop_front();
    const test_verdict v = verdict_for(x.child);
    now += 1.5;
    e.record(x.child, v.result, v.fitness, v.reason, now);
  }
  int n = 0;
  while (auto x = e.next(now))
    if (++n < 4) e.set_code(x->child, "builtin", code_for(x->child));

  grown_task g{task_record{}, c, std::move(e)};
  task_record& t = g.record;
  t.op = op;
  t.variant = "fp32";
  t.backend = "cpu";
  t.id = op + "/" + t.variant + "/" + t.backend;
  t.baseline = op + "_reference (OpenBLAS)";
  t.seconds_spent = now + 0.125;
  t.search = g.engine.save();
  for (const node& x : t.search.nodes.nodes()) {
    if (x.id == search::kRoot || x.state != search::node_state::evaluated) continue;
    if (x.result != eval::status::ok && x.result != eval::status::wrong_result) continue;
    for (int s = 0; s < 3; ++s) {
      shape_measurement m;
      m.node = x.id;
      m.shape = s == 2 ? "M=4097 × N=33 (holdout)\n" : "M=" + std::to_string(64 << s) + " N=48";
      m.holdout = s == 2;
      m.status = eval::to_string(x.result);
      m.max_abs_error = x.ok() ? 1e-7 * s : 3.2e-2;
      m.candidate_median_s = 1e-4 * (x.id + 1) + s;
      m.candidate_p10_s = m.candidate_median_s * 0.9;
      m.candidate_p90_s = m.candidate_median_s * 1.1;
      m.baseline_median_s = 2e-4 * (s + 1);
      m.speedup = m.baseline_median_s / m.candidate_median_s;
      m.achieved_gbs = 12.5 * s;
      m.achieved_gflops = 1.0 / 3.0;
      m.roofline_fraction = 0.42;
      m.bottleneck = s == 1 ? "" : "memory bandwidth";
      if (s == 0) m.torch_eager_median_s = 3e-4 + 1e-6 * x.id;  // PyTorch times where measured
      if (s == 0 && x.id % 2) m.torch_compile_median_s = 1.5e-4;
      if (s != 1 && x.ok()) {  // an attainable ceiling where the backend has one
        m.attainable_fraction = 0.5 + 1.0 / (3.0 + x.id);
        m.bound = s == 0 ? "launch + DPE split" : "memory (SRAM)";
      }
      if (s == 0 && x.ok()) {  // a profile where the backend profiled
        m.profile = "dram 71.5% of peak, occupancy 38%, l2 hit 12.5% — memory-bound";
        m.metrics = {{"dram_pct", 71.5}, {"occupancy_pct", 38.0 + 1.0 / 3.0}, {"registers", double(32 + x.id % 4 * 8)},
                     {"stall_long_scoreboard", 6.25}};
      }
      t.measurements.push_back(m);
    }
  }
  return g;
}

inline sweep_record make_record(const std::string& hash = "0123456789abcdef0123456789abcdef") {
  sweep_record r;
  r.kevolve_version = "0.1.0";
  r.config_yaml = "# sweep — température 0.7\nsearch:\n  policy: uct\n  stop: {max_evaluations: 300}\n\noperators: [softmax, gemm_bias_relu]\n";
  r.config_hash = hash;
  r.created_at = "2024-05-01T12:00:00Z";
  r.tasks.push_back(grow_task("softmax", "uct", 7, 120).record);
  for (int64_t node : {3, 5, 5}) {  // an llm exchange per node, two for node 5
    llm_exchange x;
    x.node = node;
    x.endpoint = "coder@127.0.0.1:8000";
    x.model = "coder";
    x.status = node == 3 ? "ok" : "unusable";
    x.error = node == 3 ? "" : "the reply has no fenced code block or diff";
    x.prompt = "[{\"role\":\"system\",\"content\":\"température\"},{\"role\":\"user\",\"content\":\"write\nit\"}]";
    x.reply = std::string("```cpp\nint x;\0\n```", 19);
    x.documents = "constraints/cpu.md\nguides/tuning.md\n";
    x.attempts = node == 3 ? 1 : 3;
    x.prompt_tokens = 1200 + node;
    x.completion_tokens = 300;
    x.tokens_estimated = node == 5;
    x.latency_s = 1.25;
    x.total_s = 2.5;
    x.cost = 0.00123;
    x.prompt_ms = 0.8;
    r.tasks[0].llm.push_back(x);
  }
  {  // a skill note about the first node grown from another node: its request and the note
    const auto& nodes = r.tasks[0].search.nodes.nodes();
    size_t child = 1;
    while (child < nodes.size() && nodes[child].parent < 1) ++child;
    llm_exchange x = r.tasks[0].llm[0];
    x.node = int64_t(child);
    x.purpose = "skill_note";
    x.reply = "Fusing the max and the sum into one pass halved the reads.";
    r.tasks[0].llm.push_back(x);
    skill_note k;
    k.node = int64_t(child);
    k.parent = nodes[child].parent;
    k.exchange = int64_t(r.tasks[0].llm.size()) - 1;
    k.accepted = true;
    k.parent_fitness = 1.25;
    k.child_fitness = 1.75;
    k.note = x.reply;
    k.hardware = "x86";
    k.evidence = "{\"operator\":\"softmax\",\"température\":1}";
    r.tasks[0].skills.push_back(k);
    k.accepted = false;
    k.note.clear();
    k.reason = "the note has 900 characters, over llm.skill_note_chars (600)";
    r.tasks[0].skills.push_back(k);
  }
  grown_task second = grow_task("gemm_bias_relu", "greedy", 11, 70);
  second.record.stop_reason = "max_evaluations reached\n(70 of 70)";
  second.record.baseline = "";
  r.tasks.push_back(std::move(second.record));
  return r;
}

// A large record: `nodes` nodes in one task, each with about `code_bytes`
// of code, a context, and measurements for every third node.
inline sweep_record make_big_record(const std::string& hash, size_t nodes, size_t code_bytes) {
  sweep_record r;
  r.kevolve_version = "0.1.0";
  r.config_yaml = "search: {policy: uct}\n";
  r.config_hash = hash;
  r.created_at = "2024-05-01T12:00:00Z";
  task_record t;
  t.id = "softmax/fp32/cpu";
  t.op = "softmax";
  t.variant = "fp32";
  t.backend = "cpu";
  std::vector<node> ns(nodes);
  std::string base;
  while (base.size() < code_bytes + 64) base += "for (size_t i = 0; i < n; ++i) y[i] = std::exp(x[i] - m) / s;\n";
  for (size_t k = 0; k < nodes; ++k) {
    node& n = ns[k];
    n.id = node_id(k);
    n.parent = k == 0 ? search::kNoNode : node_id((k - 1) / 3);
    n.depth = k == 0 ? 0 : ns[size_t(n.parent)].depth + 1;
    n.mode = search::memory_mode(k % 4);
    n.state = k + 5 >= nodes ? search::node_state::pending : search::node_state::evaluated;
    n.result = k == 0 ? eval::status::skipped : (k % 7 == 3 ? eval::status::compile_failed : eval::status::ok);
    n.fitness = n.result == eval::status::ok ? 1.0 + double(k % 1000) / 7.0 : 0.0;
    n.origin = k == 0 ? "task" : "builtin";
    if (k > 0) n.code = "// node " + std::to_string(k) + "\n" + base.substr(k % 64, code_bytes - 64 + k % 128);
    if (n.result == eval::status::compile_failed) n.reason = "error: expected ';' at line " + std::to_string(k % 50);
    for (size_t c = 0; k > 0 && c < k % 4; ++c) n.context.push_back(node_id((k - 1) / (c + 2)));
    n.created_s = double(k) * 0.01;
    n.finished_s = n.created_s + 0.5;
    n.visits = int64_t(k % 13);
    n.value_sum = double(k % 13) * 0.25;
    if (k > 0 && k % 3 == 0)
      t.measurements.push_back(shape_measurement{int64_t(k), "M=4096 N=1024", false, "ok", 0.0, 1e-3, 9e-4, 1.1e-3,
                                                 2e-3, 2.0, 100.0, 10.0, 0.5, "memory"});
  }
  for (size_t k = 1; k < nodes; ++k) ns[size_t(ns[k].parent)].children.push_back(node_id(k));
  t.search.nodes = search::tree::from_nodes(std::move(ns));
  t.search.random = {1, 2, 3, 0xFFFFFFFFFFFFFFFFull};
  t.search.evaluations = int64_t(nodes) - 5;
  r.tasks.push_back(std::move(t));
  return r;
}

// --- comparisons: "" when equal, else the first difference -----------------

inline std::string diff_node(const node& a, const node& b) {
  auto d = [&](const char* field) { return "node " + std::to_string(a.id) + ": '" + field + "' differs"; };
  if (a.id != b.id) return d("id");
  if (a.parent != b.parent) return d("parent");
  if (a.depth != b.depth) return d("depth");
  if (a.mode != b.mode) return d("mode");
  if (a.context != b.context) return d("context");
  if (a.origin != b.origin) return d("origin");
  if (a.code != b.code) return d("code");
  if (a.state != b.state) return d("state");
  if (a.result != b.result) return d("result");
  if (a.fitness != b.fitness) return d("fitness");
  if (a.reason != b.reason) return d("reason");
  if (a.created_s != b.created_s) return d("created_s");
  if (a.finished_s != b.finished_s) return d("finished_s");
  if (a.children != b.children) return d("children");
  if (a.visits != b.visits) return d("visits");
  if (a.value_sum != b.value_sum) return d("value_sum");
  return "";
}

inline std::string diff_snapshot(const search_engine::snapshot& a, const search_engine::snapshot& b) {
  if (a.nodes.size() != b.nodes.size())
    return "node count " + std::to_string(a.nodes.size()) + " vs " + std::to_string(b.nodes.size());
  for (size_t k = 0; k < a.nodes.size(); ++k)
    if (auto d = diff_node(a.nodes.nodes()[k], b.nodes.nodes()[k]); !d.empty()) return d;
  if (a.random != b.random) return "rng state differs";
  if (a.evaluations != b.evaluations) return "evaluations differ";
  if (a.since_improvement != b.since_improvement) return "since_improvement differs";
  if (a.best_fitness != b.best_fitness) return "best_fitness differs";
  return "";
}

inline bool operator==(const shape_measurement& a, const shape_measurement& b) {
  return a.node == b.node && a.shape == b.shape && a.holdout == b.holdout && a.status == b.status &&
         a.max_abs_error == b.max_abs_error && a.candidate_median_s == b.candidate_median_s &&
         a.candidate_p10_s == b.candidate_p10_s && a.candidate_p90_s == b.candidate_p90_s &&
         a.baseline_median_s == b.baseline_median_s && a.speedup == b.speedup && a.achieved_gbs == b.achieved_gbs &&
         a.achieved_gflops == b.achieved_gflops && a.roofline_fraction == b.roofline_fraction &&
         a.bottleneck == b.bottleneck && a.torch_eager_median_s == b.torch_eager_median_s &&
         a.torch_compile_median_s == b.torch_compile_median_s && a.profile == b.profile && a.metrics == b.metrics &&
         a.attainable_fraction == b.attainable_fraction && a.bound == b.bound;
}

// What a store of schema 5 or older gives back for a record: measurements
// without the attainable ceiling (schema 6).
inline void drop_ceilings(sweep_record& r) {
  for (auto& t : r.tasks)
    for (auto& m : t.measurements) {
      m.attainable_fraction = 0;
      m.bound.clear();
    }
}

// What a store of schema 4 or older gives back for a record: measurements
// without profiles and metrics (schema 5), and without ceilings (schema 6).
inline void drop_profiles(sweep_record& r) {
  drop_ceilings(r);
  for (auto& t : r.tasks)
    for (auto& m : t.measurements) {
      m.profile.clear();
      m.metrics.clear();
    }
}

inline std::string diff_record(const sweep_record& a, const sweep_record& b) {
  if (a.schema_version != b.schema_version) return "schema_version differs";
  if (a.kevolve_version != b.kevolve_version) return "kevolve_version differs";
  if (a.config_yaml != b.config_yaml) return "config_yaml differs";
  if (a.config_hash != b.config_hash) return "config_hash differs";
  if (a.created_at != b.created_at) return "created_at differs";
  if (a.tasks.size() != b.tasks.size()) return "task count differs";
  for (size_t i = 0; i < a.tasks.size(); ++i) {
    const task_record &x = a.tasks[i], &y = b.tasks[i];
    const std::string t = "task " + std::to_string(i) + ": ";
    if (x.id != y.id || x.op != y.op || x.variant != y.variant || x.backend != y.backend || x.baseline != y.baseline)
      return t + "names differ";
    if (x.stop_reason != y.stop_reason) return t + "stop_reason differs";
    if (x.seconds_spent != y.seconds_spent) return t + "seconds_spent differs";
    if (auto d = diff_snapshot(x.search, y.search); !d.empty()) return t + d;
    if (x.measurements.size() != y.measurements.size()) return t + "measurement count differs";
    for (size_t m = 0; m < x.measurements.size(); ++m)
      if (!(x.measurements[m] == y.measurements[m])) return t + "measurement " + std::to_string(m) + " differs";
    if (x.llm.size() != y.llm.size()) return t + "llm exchange count differs";
    for (size_t k = 0; k < x.llm.size(); ++k) {
      const llm_exchange &p = x.llm[k], &q = y.llm[k];
      if (p.node != q.node || p.endpoint != q.endpoint || p.model != q.model || p.status != q.status ||
          p.error != q.error || p.prompt != q.prompt || p.reply != q.reply || p.documents != q.documents ||
          p.attempts != q.attempts || p.prompt_tokens != q.prompt_tokens || p.completion_tokens != q.completion_tokens ||
          p.tokens_estimated != q.tokens_estimated || p.latency_s != q.latency_s || p.total_s != q.total_s ||
          p.cost != q.cost || p.prompt_ms != q.prompt_ms || p.purpose != q.purpose)
        return t + "llm exchange " + std::to_string(k) + " differs";
    }
    if (x.skills.size() != y.skills.size()) return t + "skill count differs";
    for (size_t k = 0; k < x.skills.size(); ++k) {
      const skill_note &p = x.skills[k], &q = y.skills[k];
      if (p.node != q.node || p.parent != q.parent || p.exchange != q.exchange || p.accepted != q.accepted ||
          p.parent_fitness != q.parent_fitness || p.child_fitness != q.child_fitness || p.note != q.note ||
          p.reason != q.reason || p.hardware != q.hardware || p.evidence != q.evidence)
        return t + "skill " + std::to_string(k) + " differs";
    }
  }
  return "";
}

}  // namespace kevolve::store::testing
