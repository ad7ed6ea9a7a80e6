// Reading a `sequence` operator's parts (internal to src/spec): where no one class template covers an
// operator's graph, a chain of class kernels does, each reading operator
// inputs or the intermediates earlier parts wrote, one candidate running
// them in order (synth/sequence_compose.h). The YAML:
//
//   class: sequence
//   intermediates: [{name: t0, dtype: T, shape: [...]}]     # like inputs
//   parts:
//     - {class: conv, template: {...}, inputs: [x, w], outputs: [t0], workspace_bytes: "..."}
//     - {class: pooling, template: {...}, inputs: [t0], outputs: [y]}
#pragma once

#include <yaml-cpp/yaml.h>

#include "spec/operator_spec.h"
#include "spec/yaml_reader.h"

namespace kevolve::spec {

// A YAML map of template keys into `out` (nested values as flow YAML text).
void read_template_keys(yaml_reader& r, const YAML::Node& map, const std::string& key_path,
                        std::map<std::string, std::string>& out);

// Fills op.parts from `parts` (op.inputs, op.outputs and op.intermediates
// are read first) and checks that they chain: every part reads operator
// inputs or intermediates an earlier part wrote, every intermediate is
// written once and read later, every output is written once. Sets
// op.workspace_bytes to the intermediates (each rounded up to 256 bytes)
// plus the largest part workspace. Records the line of each part's
// workspace_bytes in `lines` ("parts[i].workspace_bytes").
void read_parts(yaml_reader& r, const YAML::Node& root, operator_spec& op, std::map<std::string, int>& lines);

}  // namespace kevolve::spec
