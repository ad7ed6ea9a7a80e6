// Sweep YAML as text: the flat key=value view that merge compares and status
// reads stop rules from, and rewrites of a sweep's operators and backends that
// split a sweep into pieces (kevolve split) and describe a merged store.
// Only yaml-cpp user besides the loaders (src/spec is the yaml-cpp wrapper).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "common/error.h"
#include "spec/sweep_spec.h"

namespace kevolve::spec {

// Every scalar of the document under its dotted path: "search.stop.max_evaluations"
// -> "5", "sweep.operators[1]" -> "softmax", an empty list or map -> "[]"/"{}".
// `name` prefixes error messages ("<name>:<line>: invalid YAML: ...").
expected<std::map<std::string, std::string>> flatten_sweep_yaml(const std::string& text, const std::string& name);

// The sweep YAML `text` with sweep.operators and sweep.backends replaced
// (operators {"all"}: the scalar `all`), sweep.priorities and runtime.ranks
// entries that name operators or backends outside them dropped, and
// `comment` (lines without '#') put at the top as comment lines.
expected<std::string> sweep_yaml_with(const std::string& text, const std::string& name,
                                      const std::vector<std::string>& operators, const std::vector<std::string>& backends,
                                      const std::string& comment);

// One piece of a sweep split by operator or by backend.
struct sweep_piece {
  std::string name;  // the operator's name or the backend
  std::string yaml;  // a complete sweep file
};

// `by`: "operator" (one piece per sweep.operators entry, every backend) or
// "backend" (one piece per backend, every operator).
expected<std::vector<sweep_piece>> split_sweep(const sweep_spec& s, const std::string& by);

}  // namespace kevolve::spec
