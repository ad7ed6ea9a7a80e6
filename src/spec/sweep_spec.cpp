#include "spec/sweep_spec.h"

#include <algorithm>
#include <sstream>

#include "common/fs.h"
#include "eval/backends/registry.h"
#include "spec/llm_section.h"
#include "spec/operator_loader.h"
#include "spec/shape_points.h"
#include "spec/yaml_reader.h"

namespace kevolve::spec {

namespace {

// `sweep.shapes: {<operator>: [{name, <symbol>: integer...}, ...]}`, each
// operator one of the sweep's, each list checked as the operator's own
// shapes are (spec::replace_timed_shapes).
void read_sweep_shapes(yaml_reader& r, const YAML::Node& sh, sweep_spec& s) {
  if (!sh.IsMap()) {
    r.fail(sh, "sweep.shapes", "must map operator names to lists of shapes {name, <symbol>: integer...}");
    return;
  }
  // Each of the sweep's operators read once, by name.
  std::map<std::string, operator_spec> ops;
  for (const auto& entry : s.operators)
    if (auto o = find_operator(entry)) ops.emplace(o->name, std::move(*o));
  for (const auto& kv : sh) {
    const std::string name = kv.first.Scalar();
    const std::string key = "sweep.shapes." + name;
    const auto found = ops.find(name);
    std::optional<operator_spec> op;
    if (found != ops.end()) op = found->second;
    if (!op) {
      r.fail(kv.first, key, "names an operator that is not in sweep.operators");
      continue;
    }
    if (!kv.second.IsSequence()) {
      r.fail(kv.second, key, "must be a list of shapes {name, <symbol>: integer...}");
      continue;
    }
    std::vector<shape_point> points;
    bool ok = true;
    for (size_t i = 0; i < kv.second.size(); ++i) {
      const YAML::Node& n = kv.second[i];
      const std::string at = key + "[" + std::to_string(i) + "]";
      if (!n.IsMap()) {
        r.fail(n, at, "must be a map {name, <symbol>: integer...}");
        ok = false;
        continue;
      }
      shape_point sp;
      for (const auto& e : n) {
        const std::string k = e.first.Scalar();
        if (k == "name") {
          sp.name = e.second.Scalar();
          continue;
        }
        try {
          sp.values[k] = e.second.as<int64_t>();
        } catch (const YAML::Exception&) {
          r.fail(e.second, at + "." + k, "must be an integer, got '" + e.second.Scalar() + "'");
          ok = false;
        }
      }
      points.push_back(std::move(sp));
    }
    if (!ok) continue;
    if (auto v = replace_timed_shapes(*op, points); !v) {
      // The message starts with "[i]..." where a point is at fault.
      const std::string& m = v.error().message;
      r.fail(kv.second, key + (m.rfind("[", 0) == 0 ? m.substr(0, m.find_first_of(":")) : std::string()),
             m.rfind("[", 0) == 0 ? m.substr(m.find(':') + 2) : m);
      continue;
    }
    s.shapes[name] = std::move(points);
  }
}

}  // namespace

std::string compatibility_text(const sweep_spec& s) {
  std::ostringstream o;
  o << "operators=";
  for (const auto& op : s.operators) o << op << ",";
  o << " all_variants=" << s.all_variants << " backends=";
  for (const auto& b : s.backends) o << b << ",";
  const auto& c = s.search;
  o << " synthesizer=" << s.synthesizer << " policy=" << c.policy.name << " exploration=" << c.policy.exploration
    << " widening=" << c.policy.widening << " fresh=" << c.policy.fresh_probability << " tournament=" << c.policy.tournament_size
    << " memory=" << c.memory.mode << " reset_probability=" << c.memory.reset_probability << " seed=" << c.seed
    << " max_in_flight=" << c.max_in_flight << " threads=" << s.threads << " budget=" << s.budget_seconds
    << " trials=" << s.trials;
  for (const auto& [op, points] : s.shapes) o << " shapes." << op << "=" << describe_shapes(points);
  return o.str();
}

namespace {

// "3", "1-4" or "5-" (to the last rank).
bool parse_rank_range(const std::string& text, rank_range& out) {
  const auto dash = text.find('-');
  auto number = [](const std::string& t, int& v) {
    if (t.empty() || t.find_first_not_of("0123456789") != std::string::npos) return false;
    v = std::stoi(t);
    return true;
  };
  if (dash == std::string::npos) {
    if (!number(text, out.first)) return false;
    out.last = out.first;
  } else {
    if (!number(text.substr(0, dash), out.first)) return false;
    const std::string tail = text.substr(dash + 1);
    out.last = -1;
    if (!tail.empty() && !number(tail, out.last)) return false;
  }
  return out.first >= 1 && (out.last == -1 || out.last >= out.first);
}

void load_runtime(yaml_reader& r, const YAML::Node& root, runtime_spec& rt) {
  YAML::Node node = r.child(root, "runtime", "runtime", false);
  if (!node.IsDefined()) return;
  r.reject_unknown_keys(node, {"ranks", "deadline_seconds", "silence_seconds", "heartbeat_seconds", "grace_seconds",
                               "queue_depth", "hello_seconds"}, "runtime.");
  struct field { const char* key; double* value; double min; };
  double depth = rt.queue_depth;
  for (const field& f : {field{"deadline_seconds", &rt.deadline_seconds, 1}, field{"silence_seconds", &rt.silence_seconds, 1},
                         field{"heartbeat_seconds", &rt.heartbeat_seconds, 0.05}, field{"grace_seconds", &rt.grace_seconds, 1},
                         field{"queue_depth", &depth, 1}, field{"hello_seconds", &rt.hello_seconds, 1}}) {
    const std::string key = std::string("runtime.") + f.key;
    if (auto v = r.number_value(node, f.key, key, false)) {
      if (*v < f.min) r.fail(node[f.key], key, "must be at least " + std::to_string(f.min).substr(0, 4));
      *f.value = *v;
    }
  }
  rt.queue_depth = int(depth);
  if (rt.silence_seconds <= 2 * rt.heartbeat_seconds)
    r.fail(node, "runtime.silence_seconds", "must be more than twice runtime.heartbeat_seconds");
  YAML::Node ranks = r.child(node, "ranks", "runtime.ranks", false);
  if (!ranks.IsDefined()) return;
  if (!ranks.IsSequence()) {
    r.fail(ranks, "runtime.ranks", "must be a list of {ranks: \"1-4\", backend: cpu} entries");
    return;
  }
  for (size_t i = 0; i < ranks.size(); ++i) {
    const std::string key = "runtime.ranks[" + std::to_string(i) + "]";
    const YAML::Node e = ranks[i];
    if (!e.IsMap()) {
      r.fail(e, key, "must be a map {ranks: \"1-4\", backend: cpu}");
      continue;
    }
    r.reject_unknown_keys(e, {"ranks", "backend"}, key + ".");
    rank_range rr;
    auto text = r.string_value(e, "ranks", key + ".ranks", true);
    auto backend = r.string_value(e, "backend", key + ".backend", true);
    if (text && !parse_rank_range(*text, rr))
      r.fail(e["ranks"], key + ".ranks", "must be a rank (\"3\"), a range (\"1-4\") or an open range (\"5-\") of ranks >= 1, got \"" + *text + "\"");
    if (!text || !backend) continue;
    rr.backend = *backend;
    rt.ranks.push_back(rr);
  }
}

}  // namespace

std::string backend_for_rank(const runtime_spec& r, int rank) {
  for (const auto& rr : r.ranks)
    if (rank >= rr.first && (rr.last == -1 || rank <= rr.last)) return rr.backend;
  return "";
}

expected<sweep_spec> load_sweep(const std::filesystem::path& file) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(file, ec)) return make_error(errc::not_found, file.string() + ": no such sweep file");
  auto text = read_file(file);
  if (!text) return tl::unexpected(text.error());
  YAML::Node root;
  try {
    root = YAML::Load(*text);
  } catch (const YAML::Exception& e) {
    return make_error(errc::invalid_input, file.string() + ":" + std::to_string(e.mark.line + 1) + ": invalid YAML: " + e.msg);
  }
  yaml_reader r(file.string());
  sweep_spec s;
  s.file = file;
  s.text = *text;
  if (!root.IsMap()) return make_error(errc::invalid_input, file.string() + ":1: the document must be a map");
  r.reject_unknown_keys(root, {"sweep", "search", "evaluator", "checkpoint", "runtime", "llm"}, "");

  YAML::Node sweep = r.child(root, "sweep", "sweep", true);
  if (sweep.IsDefined()) {
    r.reject_unknown_keys(sweep, {"operators", "variants", "backends", "synthesizer", "seed", "priorities", "shapes"}, "sweep.");
    if (YAML::Node pr = r.child(sweep, "priorities", "sweep.priorities", false); pr.IsDefined()) {
      if (!pr.IsMap()) r.fail(pr, "sweep.priorities", "must map operator names to positive weights");
      else
        for (const auto& kv : pr) {
          const std::string name = kv.first.as<std::string>();
          const std::string key = "sweep.priorities." + name;
          if (auto w = r.number_value(pr, name, key, true)) {
            if (*w <= 0) r.fail(kv.second, key, "must be a positive weight");
            s.priorities[name] = *w;
          }
        }
    }
    YAML::Node ops = r.child(sweep, "operators", "sweep.operators", true);
    if (ops.IsScalar() && ops.Scalar() == "all") {
      auto catalog = load_catalog(default_operator_dir());
      if (!catalog) return tl::unexpected(catalog.error());
      for (const auto& op : *catalog) s.operators.push_back(op.name);
    } else if (auto list = r.string_list(sweep, "operators", "sweep.operators", true)) {
      for (const auto& name : *list) {
        if (!find_operator(name)) r.fail(ops, "sweep.operators", "names unknown operator '" + name + "' (see kevolve ops list)");
        s.operators.push_back(name);
      }
    }
    if (YAML::Node sh = r.child(sweep, "shapes", "sweep.shapes", false); sh.IsDefined()) read_sweep_shapes(r, sh, s);
    if (auto v = r.string_value(sweep, "variants", "sweep.variants", false)) {
      if (*v != "default" && *v != "all") r.fail(sweep["variants"], "sweep.variants", "must be default or all, got \"" + *v + "\"");
      s.all_variants = *v == "all";
    }
    if (auto b = r.string_list(sweep, "backends", "sweep.backends", false)) {
      for (const auto& x : *b)
        if (const auto* d = eval::find_backend(x); !d || !d->traits.sweepable)
          r.fail(sweep["backends"], "sweep.backends",
                 "lists '" + x + "', which kevolve cannot evaluate yet (available: " +
                     eval::backend_names([](const auto& y) { return y.traits.sweepable; }) + ")");
      s.backends = *b;
    }
    if (auto v = r.string_value(sweep, "synthesizer", "sweep.synthesizer", false)) {
      if (*v != "builtin" && *v != "llm")
        r.fail(sweep["synthesizer"], "sweep.synthesizer", "must be builtin or llm, got \"" + *v + "\"");
      s.synthesizer = *v;
    }
    if (auto v = r.number_value(sweep, "seed", "sweep.seed", false)) s.search.seed = uint64_t(*v);
  }

  YAML::Node search = r.child(root, "search", "search", true);
  if (search.IsDefined()) {
    r.reject_unknown_keys(search, {"policy", "exploration", "widening", "fresh_probability", "tournament_size", "memory",
                                   "reset_probability", "max_in_flight", "stop"}, "search.");
    auto& c = s.search;
    if (auto v = r.string_value(search, "policy", "search.policy", false)) c.policy.name = *v;
    if (auto v = r.number_value(search, "exploration", "search.exploration", false)) c.policy.exploration = *v;
    if (auto v = r.number_value(search, "widening", "search.widening", false)) c.policy.widening = *v;
    if (auto v = r.number_value(search, "fresh_probability", "search.fresh_probability", false)) c.policy.fresh_probability = *v;
    if (auto v = r.number_value(search, "tournament_size", "search.tournament_size", false)) c.policy.tournament_size = int(*v);
    if (auto v = r.string_value(search, "memory", "search.memory", false)) c.memory.mode = *v;
    if (auto v = r.number_value(search, "reset_probability", "search.reset_probability", false)) c.memory.reset_probability = *v;
    if (auto v = r.number_value(search, "max_in_flight", "search.max_in_flight", false)) c.max_in_flight = int(*v);
    YAML::Node stop = r.child(search, "stop", "search.stop", true);
    if (stop.IsDefined()) {
      r.reject_unknown_keys(stop, {"target_fitness", "max_evaluations", "max_seconds", "stagnation"}, "search.stop.");
      if (auto v = r.number_value(stop, "target_fitness", "search.stop.target_fitness", false)) c.stop.target_fitness = *v;
      if (auto v = r.number_value(stop, "max_evaluations", "search.stop.max_evaluations", false)) c.stop.max_evaluations = int64_t(*v);
      if (auto v = r.number_value(stop, "max_seconds", "search.stop.max_seconds", false)) c.stop.max_seconds = *v;
      if (auto v = r.number_value(stop, "stagnation", "search.stop.stagnation", false)) c.stop.stagnation = int64_t(*v);
    }
    if (r.ok()) {
      // The engine validates its own config; its messages start with the key.
      if (auto engine = search::search_engine::create(c); !engine) {
        const std::string& m = engine.error().message;
        const size_t end = m.size() > 1 && m[0] == '\'' ? m.find('\'', 1) : std::string::npos;
        if (end != std::string::npos) r.fail(search, m.substr(1, end - 1), m.substr(end + 2));
        else r.fail(search, "search", m);
      }
    }
  }

  YAML::Node ev = r.child(root, "evaluator", "evaluator", false);
  if (ev.IsDefined()) {
    r.reject_unknown_keys(ev, {"threads", "budget", "timeout_ms", "trials", "torch_baselines", "torch_compile", "ncu", "fitness"}, "evaluator.");
    if (auto v = r.number_value(ev, "threads", "evaluator.threads", false)) s.threads = int(*v);
    if (auto v = r.number_value(ev, "budget", "evaluator.budget", false)) s.budget_seconds = *v;
    if (auto v = r.number_value(ev, "timeout_ms", "evaluator.timeout_ms", false)) s.timeout_ms = int(*v);
    if (auto v = r.number_value(ev, "trials", "evaluator.trials", false)) s.trials = int(*v);
    if (auto v = r.string_value(ev, "torch_baselines", "evaluator.torch_baselines", false)) {
      if (*v != "auto" && *v != "on" && *v != "off")
        r.fail(ev["torch_baselines"], "evaluator.torch_baselines", "must be auto, on or off, got \"" + *v + "\"");
      else
        s.torch_baselines = *v;
    }
    if (auto v = r.string_value(ev, "torch_compile", "evaluator.torch_compile", false)) {
      if (*v != "auto" && *v != "on" && *v != "off")
        r.fail(ev["torch_compile"], "evaluator.torch_compile", "must be auto, on or off, got \"" + *v + "\"");
      else
        s.torch_compile = *v;
    }
    if (auto v = r.string_value(ev, "fitness", "evaluator.fitness", false)) {
      if (*v != "torch" && *v != "baseline")
        r.fail(ev["fitness"], "evaluator.fitness", "must be torch (the faster of PyTorch eager and torch.compile) or baseline, got \"" + *v + "\"");
      else if (*v == "torch" && s.torch_baselines == "off")
        r.fail(ev["fitness"], "evaluator.fitness", "is torch, but evaluator.torch_baselines is off (PyTorch is not timed)");
      else
        s.fitness = *v;
    }
    if (auto v = r.string_value(ev, "ncu", "evaluator.ncu", false)) {
      if (*v != "auto" && *v != "on" && *v != "off")
        r.fail(ev["ncu"], "evaluator.ncu", "must be auto, on or off, got \"" + *v + "\"");
      else
        s.ncu = *v;
    }
    if (s.threads < 0 || s.budget_seconds <= 0 || s.timeout_ms <= 0 || s.trials < 1)
      r.fail(ev, "evaluator", "needs threads >= 0, budget > 0, timeout_ms > 0 and trials >= 1");
  }
  load_runtime(r, root, s.runtime);
  load_llm(r, root, s.llm);
  YAML::Node cp = r.child(root, "checkpoint", "checkpoint", false);
  if (cp.IsDefined()) {
    r.reject_unknown_keys(cp, {"every_seconds"}, "checkpoint.");
    if (auto v = r.number_value(cp, "every_seconds", "checkpoint.every_seconds", false)) {
      if (*v <= 0) r.fail(cp["every_seconds"], "checkpoint.every_seconds", "must be positive");
      s.checkpoint_seconds = *v;
    }
  }
  for (const auto& [name, w] : s.priorities) {
    bool known = false;
    for (const auto& entry : s.operators)
      if (auto op = find_operator(entry); op && op->name == name) known = true;
    if (!known) r.fail(root["sweep"]["priorities"], "sweep.priorities." + name, "names an operator that is not in sweep.operators");
  }
  for (const auto& rr : s.runtime.ranks)
    if (std::find(s.backends.begin(), s.backends.end(), rr.backend) == s.backends.end())
      r.fail(root["runtime"]["ranks"], "runtime.ranks", "gives ranks backend '" + rr.backend + "', which is not in sweep.backends");
  if (!r.ok()) {
    std::string all;
    for (const auto& e : r.errors()) all += (all.empty() ? "" : "\n") + e;
    return make_error(errc::invalid_input, all);
  }
  return s;
}

}  // namespace kevolve::spec
