// An operator as loaded from config/operators/<name>.yaml, and its
// resolution at one (variant, shape point) into concrete tensors.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "common/error.h"
#include "common/expr.h"
#include "spec/dtype.h"

namespace kevolve::spec {

struct tensor_spec {
  std::string name;
  std::string dtype;               // a dtype name or a type symbol of `variants`
  std::vector<std::string> shape;  // expressions over shape symbols
};

struct param_spec {
  std::string name;
  bool is_float = false;
  std::string value;  // expression over shape symbols
};

struct distribution {
  std::string dist;                           // uniform normal randint zipf sorted_uniform offsets
  std::map<std::string, std::string> args;    // expressions
};

struct shape_point {
  std::string name;
  std::map<std::string, int64_t> values;  // free symbol -> value
};

struct tolerance {
  double atol = 0.0;
  double rtol = 0.0;
};

struct variant {
  std::string name;
  std::map<std::string, dtype> types;  // type symbol -> dtype
};

struct baseline_spec {
  std::string name;
  std::filesystem::path source;
  std::vector<std::string> libraries;
};

// A symbol counted from each input set, for the cost expressions: the
// sum over the segments of an int64 offsets input (n + 1 entries) of
// min(length, cap). `bound` (at least every count) stands for it where no
// data exists: the shape's bytes, bytes_floor and flops before inputs are
// drawn.
struct data_symbol {
  std::string name;
  std::string offsets;  // the input tensor
  std::string cap;      // expression over shape symbols
  std::string bound;    // expression over shape symbols
};

// One step of a `sequence` operator (the YAML's `parts`): a class kernel
// that reads operator inputs or earlier parts' intermediates and writes
// intermediates or operator outputs, by name (spec/operator_parts.h).
struct operator_part {
  std::string op_class;
  std::map<std::string, std::string> template_params;
  std::vector<std::string> inputs;
  std::vector<std::string> outputs;
  std::string workspace_bytes = "0";  // the part's own scratch, over the shape symbols
};

struct operator_spec {
  std::filesystem::path file;
  std::string name;
  std::string op_class;
  std::string description;
  std::vector<variant> variants;  // first is the default
  std::vector<std::string> symbols;
  std::vector<std::pair<std::string, std::string>> derived;
  std::vector<tensor_spec> inputs;
  std::vector<tensor_spec> outputs;
  std::vector<param_spec> params;
  std::map<std::string, std::vector<distribution>> generators;
  std::vector<shape_point> shapes;
  std::vector<shape_point> holdout_shapes;
  std::string bytes;
  std::string bytes_floor;  // empty: same as bytes
  std::string flops;
  // 32-bit integer-lane passes of the operator's integer work at its cheapest
  // decomposition (config/operators/README.md); empty: none. Only the
  // attainable ceiling reads it (eval/backends/ceiling.h).
  std::string int_passes;
  std::string workspace_bytes = "0";
  std::vector<data_symbol> data_symbols;  // counted per input set (clipped_lengths)
  std::map<dtype, tolerance> tolerances;
  double reference_max_flops = 2e9;
  double max_speedup = 50.0;
  // backend -> the variant a sweep with `variants: default` runs there (the
  // YAML's `default_variant`); a backend not listed runs the first variant.
  std::map<std::string, std::string> default_variant;
  std::filesystem::path reference;
  // What candidates of each backend are timed against, by backend name
  // (`baselines` in the YAML); none: the backend refuses the operator.
  std::map<std::string, baseline_spec> baselines;
  // The host backend's (cpu), which every operator has: it also stands in
  // for the reference at large shapes. Equal to baselines.at("cpu").
  baseline_spec baseline;
  // PyTorch's version of the operator (`torch` in the YAML): a Python
  // expression (or a function body that returns) over the inputs and params
  // by name, `torch` and `F` (torch.nn.functional); or a function or an
  // nn.Module of a Python file beside the YAML (torch_file). Where there is
  // no `reference`, it is the reference (run in fp64); where PyTorch runs, it
  // is the yardstick of the fitness (eager and torch.compile).
  std::string torch;              // the expression; empty for the file form
  std::filesystem::path torch_file;  // the file form: its Python file (absolute)
  // The manifest's "torch" entry (src/eval/torch_entry.py): {"expression"}
  // or {"file", "function"} or {"file", "module", "init", "weights", "eval"},
  // as JSON text; empty: the operator has no PyTorch version.
  std::string torch_entry;
  bool has_torch() const { return !torch_entry.empty(); }
  // Gives the operator the expression form of `torch` (empty: none).
  void set_torch_expression(const std::string& expression);
  // No `reference`: PyTorch in fp64 is the reference.
  bool torch_reference() const { return reference.empty(); }
  std::vector<std::string> allowed_libraries;
  std::map<std::string, std::string> template_params;
  // The traced forward's aten ops, in order (`graph.ops`; from `kevolve ops
  // import`), and the op that gave the operator its class (`graph.main`):
  // what a sweep names when no class template serves the operator.
  std::vector<std::string> graph_ops;
  std::string graph_main;
  // Class `sequence`: the parts, run in order on one stream, and the
  // tensors they pass between them (kept in the workspace, whose size the
  // loader computes from these and the parts' own workspaces).
  std::vector<operator_part> parts;
  std::vector<tensor_spec> intermediates;

  const variant* find_variant(const std::string& name) const;
  const shape_point* find_shape(const std::string& name) const;  // timed or holdout
};

// A tensor at a concrete shape.
struct tensor_instance {
  std::string name;
  dtype type = dtype::f32;
  std::vector<int64_t> dims;
  int64_t numel() const;
  size_t bytes() const { return static_cast<size_t>(numel()) * dtype_size(type); }
};

struct param_instance {
  std::string name;
  bool is_float = false;
  double value = 0.0;
};

// Everything the evaluator needs for one (variant, shape point).
struct problem_instance {
  std::string shape_name;
  bool holdout = false;
  symbol_table symbols;  // free + derived + sizeof_<T> + sizeof_<dtype>
  std::vector<tensor_instance> inputs;
  std::vector<tensor_instance> outputs;
  std::vector<param_instance> params;
  double bytes = 0.0;
  double bytes_floor = 0.0;  // least traffic any correct kernel needs (reuse in caches allowed)
  double flops = 0.0;
  double int_passes = 0.0;  // the operator's `int_passes` at this shape; 0: none
  size_t workspace_bytes = 0;
  // The operator's data symbols at this shape (bound to their `bound` in
  // `symbols`, so `bytes` is the most any input set needs).
  struct counted_symbol {
    std::string name;
    size_t input = 0;  // index into inputs: the offsets
    double cap = 0.0;
  };
  std::vector<counted_symbol> counted;
};

// The most one input set and its outputs may take: the evaluator keeps
// several sets, the reference's fp64 copy and the outputs in memory.
inline constexpr double kMaxShapeBytes = 4.0 * (1ull << 30);

expected<problem_instance> resolve(const operator_spec& op, const variant& v, const shape_point& shape,
                                   bool holdout);

// `bytes` of one input set: the data symbols counted from its inputs
// (input(i): the data of inputs[i]); p.bytes where the operator has none.
expected<double> set_bytes(const operator_spec& op, const problem_instance& p,
                           const std::function<const void*(size_t)>& input);

// Part i of a `sequence` operator as an operator of its own: the part's
// class, template keys, workspace, inputs and outputs (operator tensors or
// intermediates); the symbols, variants, params and shapes of `op`
// (spec/operator_parts.cpp).
operator_spec part_operator(const operator_spec& op, size_t i);

// The dtype of a tensor under a variant.
expected<dtype> tensor_dtype(const operator_spec& op, const variant& v, const tensor_spec& t);

}  // namespace kevolve::spec
