// Reads typed values out of yaml-cpp nodes and collects errors that name the
// file, the line and the key: "config/operators/x.yaml:12: 'shapes[1].B' must
// be a positive integer, got \"abc\"". Internal to src/spec (the only yaml-cpp user).
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

namespace kevolve::spec {

class yaml_reader {
 public:
  explicit yaml_reader(std::string file) : file_(std::move(file)) {}

  // Records "file:line: 'key' <expectation>" at the node's line.
  void fail(const YAML::Node& at, const std::string& key, const std::string& expectation);
  void fail_at_line(int line, const std::string& key, const std::string& expectation);

  // Child lookups on a map; `key_path` is the dotted path used in messages.
  YAML::Node child(const YAML::Node& map, const std::string& key, const std::string& key_path, bool required);
  std::optional<std::string> string_value(const YAML::Node& map, const std::string& key,
                                          const std::string& key_path, bool required);
  std::optional<double> number_value(const YAML::Node& map, const std::string& key, const std::string& key_path,
                                     bool required);
  // A scalar that is a number or an expression string.
  std::optional<std::string> expression_value(const YAML::Node& map, const std::string& key,
                                              const std::string& key_path, bool required);
  std::optional<int64_t> as_int(const YAML::Node& node, const std::string& key_path);
  std::optional<std::vector<std::string>> string_list(const YAML::Node& map, const std::string& key,
                                                      const std::string& key_path, bool required);

  // Errors for keys of `map` outside `allowed`.
  void reject_unknown_keys(const YAML::Node& map, const std::set<std::string>& allowed, const std::string& prefix);

  static int line_of(const YAML::Node& n) { return n.Mark().line >= 0 ? n.Mark().line + 1 : 1; }
  static std::string describe(const YAML::Node& n);

  const std::string& file() const { return file_; }
  const std::vector<std::string>& errors() const { return errors_; }
  bool ok() const { return errors_.empty(); }

 private:
  std::string file_;
  std::vector<std::string> errors_;
};

}  // namespace kevolve::spec
