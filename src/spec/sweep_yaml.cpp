#include "spec/sweep_yaml.h"

#include <algorithm>
#include <sstream>

#include <yaml-cpp/yaml.h>

#include "spec/operator_loader.h"

namespace kevolve::spec {

namespace {

expected<YAML::Node> parse(const std::string& text, const std::string& name) {
  try {
    YAML::Node root = YAML::Load(text);
    if (!root.IsMap()) return make_error(errc::invalid_input, name + ":1: the document must be a map");
    return root;
  } catch (const YAML::Exception& e) {
    return make_error(errc::invalid_input, name + ":" + std::to_string(e.mark.line + 1) + ": invalid YAML: " + e.msg);
  }
}

void flatten(const YAML::Node& n, const std::string& path, std::map<std::string, std::string>& out) {
  if (n.IsMap()) {
    if (n.size() == 0) out[path] = "{}";
    for (const auto& kv : n) flatten(kv.second, path.empty() ? kv.first.as<std::string>() : path + "." + kv.first.as<std::string>(), out);
  } else if (n.IsSequence()) {
    if (n.size() == 0) out[path] = "[]";
    for (size_t i = 0; i < n.size(); ++i) flatten(n[i], path + "[" + std::to_string(i) + "]", out);
  } else if (n.IsScalar()) {
    out[path] = n.Scalar();
  } else {
    out[path] = "";
  }
}

// The catalog name of an operators entry (a name or a YAML path), else the entry.
std::string operator_name(const std::string& entry) {
  if (auto op = find_operator(entry)) return op->name;
  return entry;
}

}  // namespace

expected<std::map<std::string, std::string>> flatten_sweep_yaml(const std::string& text, const std::string& name) {
  auto root = parse(text, name);
  if (!root) return tl::unexpected(root.error());
  std::map<std::string, std::string> out;
  flatten(*root, "", out);
  return out;
}

expected<std::string> sweep_yaml_with(const std::string& text, const std::string& name,
                                      const std::vector<std::string>& operators, const std::vector<std::string>& backends,
                                      const std::string& comment) {
  auto parsed = parse(text, name);
  if (!parsed) return tl::unexpected(parsed.error());
  YAML::Node root = *parsed;
  if (!root["sweep"].IsMap()) return make_error(errc::invalid_input, name + ":1: 'sweep' must be a map");
  YAML::Node sweep = root["sweep"];
  const bool all = operators.size() == 1 && operators[0] == "all";
  if (all) {
    sweep["operators"] = "all";
  } else {
    YAML::Node ops(YAML::NodeType::Sequence);
    for (const auto& o : operators) ops.push_back(o);
    sweep["operators"] = ops;
  }
  YAML::Node bs(YAML::NodeType::Sequence);
  for (const auto& b : backends) bs.push_back(b);
  sweep["backends"] = bs;
  if (sweep["priorities"].IsMap() && !all) {
    std::vector<std::string> names;
    for (const auto& o : operators) names.push_back(operator_name(o));
    YAML::Node kept(YAML::NodeType::Map);
    for (const auto& kv : sweep["priorities"])
      if (std::find(names.begin(), names.end(), kv.first.as<std::string>()) != names.end()) kept[kv.first] = kv.second;
    if (kept.size() == 0) sweep.remove("priorities");
    else sweep["priorities"] = kept;
  }
  if (root["runtime"].IsMap() && root["runtime"]["ranks"].IsSequence()) {
    YAML::Node runtime = root["runtime"];
    YAML::Node kept(YAML::NodeType::Sequence);
    for (const auto& r : runtime["ranks"]) {
      const std::string b = r["backend"].IsScalar() ? r["backend"].Scalar() : "";
      if (std::find(backends.begin(), backends.end(), b) != backends.end()) kept.push_back(r);
    }
    if (kept.size() == 0) runtime.remove("ranks");
    else runtime["ranks"] = kept;
  }
  YAML::Emitter e;
  e << root;
  if (!e.good()) return make_error(errc::internal, name + ": cannot write the YAML: " + e.GetLastError());
  std::ostringstream out;
  std::istringstream lines(comment);
  for (std::string line; std::getline(lines, line);) out << "# " << line << "\n";
  out << e.c_str() << "\n";
  return out.str();
}

expected<std::vector<sweep_piece>> split_sweep(const sweep_spec& s, const std::string& by) {
  const std::string name = s.file.string();
  std::vector<sweep_piece> pieces;
  if (by == "operator") {
    for (const auto& entry : s.operators) {
      auto y = sweep_yaml_with(s.text, name, {entry}, s.backends,
                               "piece of " + name + ": operator " + operator_name(entry) + " (kevolve split --by operator)");
      if (!y) return tl::unexpected(y.error());
      pieces.push_back({operator_name(entry), std::move(*y)});
    }
  } else if (by == "backend") {
    for (const auto& b : s.backends) {
      auto y = sweep_yaml_with(s.text, name, s.operators, {b}, "piece of " + name + ": backend " + b + " (kevolve split --by backend)");
      if (!y) return tl::unexpected(y.error());
      pieces.push_back({b, std::move(*y)});
    }
  } else {
    return make_error(errc::invalid_input, "split: --by must be operator or backend, got '" + by + "'");
  }
  return pieces;
}

}  // namespace kevolve::spec
