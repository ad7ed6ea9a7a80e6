#include "spec/yaml_reader.h"

#include <cmath>
#include <map>

namespace kevolve::spec {

std::string yaml_reader::describe(const YAML::Node& n) {
  switch (n.Type()) {
    case YAML::NodeType::Null: return "nothing";
    case YAML::NodeType::Scalar: return "\"" + n.Scalar() + "\"";
    case YAML::NodeType::Sequence: return "a list";
    case YAML::NodeType::Map: return "a map";
    default: return "an undefined value";
  }
}

void yaml_reader::fail(const YAML::Node& at, const std::string& key, const std::string& expectation) {
  fail_at_line(line_of(at), key, expectation);
}

void yaml_reader::fail_at_line(int line, const std::string& key, const std::string& expectation) {
  errors_.push_back(file_ + ":" + std::to_string(line) + ": '" + key + "' " + expectation);
}

YAML::Node yaml_reader::child(const YAML::Node& map, const std::string& key, const std::string& key_path,
                              bool required) {
  if (!map.IsMap()) {
    // A section written as a scalar or a list has none of its keys.
    if (required && map.IsDefined()) fail(map, key_path, "is required, but its section is " + describe(map) + ", not a map");
    return YAML::Node(YAML::NodeType::Undefined);
  }
  YAML::Node c = map[key];
  if (!c.IsDefined() || c.IsNull()) {
    if (required) fail(map, key_path, "is required but missing");
    return YAML::Node(YAML::NodeType::Undefined);
  }
  return c;
}

std::optional<std::string> yaml_reader::string_value(const YAML::Node& map, const std::string& key,
                                                     const std::string& key_path, bool required) {
  YAML::Node c = child(map, key, key_path, required);
  if (!c.IsDefined()) return std::nullopt;
  if (!c.IsScalar()) {
    fail(c, key_path, "must be a string, got " + describe(c));
    return std::nullopt;
  }
  return c.Scalar();
}

std::optional<double> yaml_reader::number_value(const YAML::Node& map, const std::string& key,
                                                const std::string& key_path, bool required) {
  YAML::Node c = child(map, key, key_path, required);
  if (!c.IsDefined()) return std::nullopt;
  if (c.IsScalar()) {
    try {
      const double v = c.as<double>();
      if (std::isfinite(v)) return v;
    } catch (const YAML::Exception&) {
    }
  }
  fail(c, key_path, "must be a number, got " + describe(c));
  return std::nullopt;
}

std::optional<std::string> yaml_reader::expression_value(const YAML::Node& map, const std::string& key,
                                                         const std::string& key_path, bool required) {
  YAML::Node c = child(map, key, key_path, required);
  if (!c.IsDefined()) return std::nullopt;
  if (!c.IsScalar()) {
    fail(c, key_path, "must be a number or an expression string, got " + describe(c));
    return std::nullopt;
  }
  return c.Scalar();
}

std::optional<int64_t> yaml_reader::as_int(const YAML::Node& node, const std::string& key_path) {
  if (node.IsScalar()) {
    try {
      return node.as<int64_t>();
    } catch (const YAML::Exception&) {
    }
  }
  fail(node, key_path, "must be an integer, got " + describe(node));
  return std::nullopt;
}

std::optional<std::vector<std::string>> yaml_reader::string_list(const YAML::Node& map, const std::string& key,
                                                                 const std::string& key_path, bool required) {
  YAML::Node c = child(map, key, key_path, required);
  if (!c.IsDefined()) return std::nullopt;
  if (!c.IsSequence()) {
    fail(c, key_path, "must be a list of strings, got " + describe(c));
    return std::nullopt;
  }
  std::vector<std::string> out;
  for (size_t i = 0; i < c.size(); ++i) {
    if (!c[i].IsScalar()) {
      fail(c[i], key_path + "[" + std::to_string(i) + "]", "must be a string, got " + describe(c[i]));
      return std::nullopt;
    }
    out.push_back(c[i].Scalar());
  }
  return out;
}

void yaml_reader::reject_unknown_keys(const YAML::Node& map, const std::set<std::string>& allowed,
                                      const std::string& prefix) {
  if (!map.IsMap()) return;
  std::map<std::string, int> seen;  // key -> line of its first occurrence
  for (const auto& kv : map) {
    const std::string k = kv.first.Scalar();
    // yaml-cpp keeps both entries of a repeated key and reads the first.
    if (auto [it, fresh] = seen.emplace(k, line_of(kv.first)); !fresh)
      fail(kv.first, prefix + k, "appears twice (first on line " + std::to_string(it->second) + ")");
    if (!allowed.count(k)) {
      std::string list;
      for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
      fail(kv.first, prefix + k, "is not a known key (expected one of: " + list + ")");
    }
  }
}

}  // namespace kevolve::spec
