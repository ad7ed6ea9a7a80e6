// An operator's PyTorch version, the YAML's `torch`: an expression (or a
// function body), or a map {file, function} | {file, module, init, weights,
// eval} naming a Python file beside the YAML (src/eval/torch_entry.py is the
// runtime contract). Internal to src/spec.
#pragma once

#include <filesystem>

#include <yaml-cpp/yaml.h>

#include "spec/operator_spec.h"
#include "spec/yaml_reader.h"

namespace kevolve::spec {

// Fills op.torch (the expression form), op.torch_file and op.torch_entry
// (the form as JSON, the file absolute); checks that `weights` names inputs
// and the strings of `init` name params (op.inputs and op.params are read
// first).
void read_torch(yaml_reader& r, const YAML::Node& root, const std::filesystem::path& file, operator_spec& op);

// Fills op.graph_ops and op.graph_main from `graph: {ops: [...], main: ...}`
// (what `kevolve ops import` traced: the forward's aten ops, and the one that
// gave the operator its class).
void read_graph(yaml_reader& r, const YAML::Node& root, operator_spec& op);

}  // namespace kevolve::spec
