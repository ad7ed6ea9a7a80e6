#include "spec/operator_torch.h"

#include <algorithm>
#include <functional>

#include <nlohmann/json.hpp>

namespace kevolve::spec {
namespace fs = std::filesystem;

namespace {

// A YAML scalar or list as JSON: numbers stay numbers, other scalars strings.
nlohmann::json yaml_to_json(const YAML::Node& n) {
  if (n.IsSequence()) {
    nlohmann::json a = nlohmann::json::array();
    for (const auto& x : n) a.push_back(yaml_to_json(x));
    return a;
  }
  const std::string s = n.Scalar();
  if (n.Tag() != "!" ) {
    try {
      size_t used = 0;
      const long long i = std::stoll(s, &used);
      if (used == s.size()) return i;
      const double d = std::stod(s, &used);
      if (used == s.size()) return d;
    } catch (const std::exception&) {
    }
    if (s == "true" || s == "false") return s == "true";
  }
  return s;
}

}  // namespace

void read_torch(yaml_reader& r, const YAML::Node& root, const fs::path& file, operator_spec& op) {
  const YAML::Node t = r.child(root, "torch", "torch", false);
  if (!t.IsDefined()) return;
  nlohmann::json entry;
  if (t.IsScalar()) {
    auto text = r.string_value(root, "torch", "torch", false);
    if (!text) return;
    if (text->find_first_not_of(" \t\n") == std::string::npos) {
      r.fail(t, "torch", "must be a Python expression or function body over the inputs and params, got an empty string");
      return;
    }
    op.torch = *text;
    entry["expression"] = *text;
  } else if (t.IsMap()) {
    r.reject_unknown_keys(t, {"file", "function", "module", "init", "weights", "eval"}, "torch.");
    auto name = r.string_value(t, "file", "torch.file", true);
    if (!name) return;
    op.torch_file = fs::absolute(file.parent_path() / *name).lexically_normal();
    if (!fs::is_regular_file(op.torch_file))
      r.fail(t["file"], "torch.file", "must name an existing file relative to the YAML, got \"" + op.torch_file.string() + "\" (not found)");
    entry["file"] = op.torch_file.string();
    const bool fn = t["function"].IsDefined(), mod = t["module"].IsDefined();
    if (fn == mod) {
      r.fail(t, "torch", "needs exactly one of 'function' (called with the inputs and params) or 'module' (an nn.Module class)");
      return;
    }
    if (fn) {
      if (auto f = r.string_value(t, "function", "torch.function", true)) entry["function"] = *f;
      for (const char* k : {"init", "weights", "eval"})
        if (t[k].IsDefined()) r.fail(t[k], std::string("torch.") + k, "applies to 'module' only");
    } else {
      if (auto m = r.string_value(t, "module", "torch.module", true)) entry["module"] = *m;
      nlohmann::json init = nlohmann::json::array();
      const YAML::Node in = t["init"];
      if (in.IsDefined() && !in.IsSequence()) r.fail(in, "torch.init", "must be a list of constructor arguments, got " + yaml_reader::describe(in));
      else if (in.IsDefined())
        for (const auto& a : in) init.push_back(yaml_to_json(a));
      entry["init"] = init;
      nlohmann::json weights = nlohmann::json::object();
      const YAML::Node w = t["weights"];
      if (w.IsDefined() && !w.IsMap()) r.fail(w, "torch.weights", "must map input names to the module's parameters and buffers, got " + yaml_reader::describe(w));
      else if (w.IsDefined())
        for (const auto& kv : w) {
          weights[kv.first.Scalar()] = kv.second.Scalar();
          if (std::none_of(op.inputs.begin(), op.inputs.end(), [&](const tensor_spec& x) { return x.name == kv.first.Scalar(); }))
            r.fail(kv.first, "torch.weights." + kv.first.Scalar(), "names no input of the operator");
        }
      entry["weights"] = weights;
      // A string in init names a param (torch_entry resolves it per shape).
      std::function<void(const nlohmann::json&)> check_init = [&](const nlohmann::json& v) {
        if (v.is_array())
          for (const auto& x : v) check_init(x);
        else if (v.is_string() &&
                 std::none_of(op.params.begin(), op.params.end(), [&](const param_spec& p) { return p.name == v.get<std::string>(); }))
          r.fail(in, "torch.init", "names \"" + v.get<std::string>() + "\", which is no param of the operator");
      };
      check_init(init);
      entry["eval"] = t["eval"].IsDefined() && t["eval"].as<bool>(false);
    }
  } else {
    r.fail(t, "torch", "must be a Python expression, or a map {file, function | module, init, weights, eval}, got " +
                            yaml_reader::describe(t));
    return;
  }
  op.torch_entry = entry.dump();
}

void read_graph(yaml_reader& r, const YAML::Node& root, operator_spec& op) {
  YAML::Node g = r.child(root, "graph", "graph", false);
  if (!g.IsDefined()) return;
  if (!g.IsMap()) {
    r.fail(g, "graph", "must be a map {ops: [aten::..., ...], main: aten::...}, got " + yaml_reader::describe(g));
    return;
  }
  r.reject_unknown_keys(g, {"ops", "main"}, "graph.");
  YAML::Node ops = r.child(g, "ops", "graph.ops", true);
  if (ops.IsDefined() && !ops.IsSequence()) r.fail(ops, "graph.ops", "must be a list of op names (aten::...), got " + yaml_reader::describe(ops));
  else if (ops.IsDefined())
    for (const auto& o : ops) {
      if (!o.IsScalar() || o.Scalar().empty()) r.fail(o, "graph.ops", "must hold op names (aten::...), got " + yaml_reader::describe(o));
      else op.graph_ops.push_back(o.Scalar());
    }
  if (YAML::Node m = r.child(g, "main", "graph.main", false); m.IsDefined()) {
    if (!m.IsScalar() || std::find(op.graph_ops.begin(), op.graph_ops.end(), m.Scalar()) == op.graph_ops.end())
      r.fail(m, "graph.main", "must be one of graph.ops, got " + yaml_reader::describe(m));
    else op.graph_main = m.Scalar();
  }
}

}  // namespace kevolve::spec
