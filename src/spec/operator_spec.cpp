#include "spec/operator_spec.h"

#include <cstdio>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>

namespace kevolve::spec {

void operator_spec::set_torch_expression(const std::string& expression) {
  torch = expression;
  torch_file.clear();
  torch_entry = expression.empty() ? std::string() : nlohmann::json{{"expression", expression}}.dump();
}

const variant* operator_spec::find_variant(const std::string& n) const {
  for (const auto& v : variants)
    if (v.name == n) return &v;
  return nullptr;
}

const shape_point* operator_spec::find_shape(const std::string& n) const {
  for (const auto& s : shapes)
    if (s.name == n) return &s;
  for (const auto& s : holdout_shapes)
    if (s.name == n) return &s;
  return nullptr;
}

int64_t tensor_instance::numel() const {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

expected<dtype> tensor_dtype(const operator_spec& op, const variant& v, const tensor_spec& t) {
  if (auto d = parse_dtype(t.dtype)) return *d;
  auto it = v.types.find(t.dtype);
  if (it != v.types.end()) return it->second;
  return make_error(errc::invalid_input, op.file.string() + ": tensor '" + t.name + "': dtype '" + t.dtype +
                                             "' is neither a dtype (" + dtype_names_list() +
                                             ") nor a type symbol of variant '" + v.name + "'");
}

namespace {

expected<int64_t> eval_int(const std::string& text, const symbol_table& symbols, const std::string& what) {
  auto v = evaluate_expression(text, symbols);
  if (!v) return make_error(errc::invalid_input, what + ": " + v.error().message);
  const double r = std::round(*v);
  if (std::fabs(*v - r) > 1e-9 * std::max(1.0, std::fabs(*v)))
    return make_error(errc::invalid_input, what + ": \"" + text + "\" is not an integer (" + std::to_string(*v) + ")");
  return static_cast<int64_t>(r);
}

expected<std::vector<tensor_instance>> resolve_tensors(const operator_spec& op, const variant& v,
                                                       const std::vector<tensor_spec>& specs,
                                                       const symbol_table& symbols, const std::string& where) {
  std::vector<tensor_instance> out;
  for (const auto& t : specs) {
    tensor_instance inst;
    inst.name = t.name;
    auto dt = tensor_dtype(op, v, t);
    if (!dt) return tl::unexpected(dt.error());
    inst.type = *dt;
    for (size_t i = 0; i < t.shape.size(); ++i) {
      auto d = eval_int(t.shape[i], symbols, where + ": tensor '" + t.name + "' dim " + std::to_string(i));
      if (!d) return tl::unexpected(d.error());
      if (*d <= 0)
        return make_error(errc::invalid_input, where + ": tensor '" + t.name + "' dim " + std::to_string(i) + " (\"" +
                                                   t.shape[i] + "\") must be positive, got " + std::to_string(*d));
      inst.dims.push_back(*d);
    }
    out.push_back(std::move(inst));
  }
  return out;
}

}  // namespace

expected<problem_instance> resolve(const operator_spec& op, const variant& v, const shape_point& shape,
                                   bool holdout) {
  const std::string where = op.file.string() + ": shape '" + shape.name + "' (variant " + v.name + ")";
  problem_instance p;
  p.shape_name = shape.name;
  p.holdout = holdout;
  for (const auto& s : op.symbols) {
    auto it = shape.values.find(s);
    if (it == shape.values.end())
      return make_error(errc::invalid_input, where + ": symbol '" + s + "' is not bound");
    p.symbols[s] = static_cast<double>(it->second);
  }
  for (dtype t : {dtype::f32, dtype::f16, dtype::bf16, dtype::i32, dtype::i64, dtype::f64})
    p.symbols[std::string("sizeof_") + dtype_name(t)] = static_cast<double>(dtype_size(t));
  for (const auto& [sym, t] : v.types) p.symbols["sizeof_" + sym] = static_cast<double>(dtype_size(t));
  for (const auto& [name, text] : op.derived) {
    auto val = evaluate_expression(text, p.symbols);
    if (!val) return make_error(errc::invalid_input, where + ": derived '" + name + "': " + val.error().message);
    p.symbols[name] = *val;
  }
  auto ins = resolve_tensors(op, v, op.inputs, p.symbols, where);
  if (!ins) return tl::unexpected(ins.error());
  p.inputs = std::move(*ins);
  auto outs = resolve_tensors(op, v, op.outputs, p.symbols, where);
  if (!outs) return tl::unexpected(outs.error());
  p.outputs = std::move(*outs);
  for (const auto& prm : op.params) {
    auto val = evaluate_expression(prm.value, p.symbols);
    if (!val) return make_error(errc::invalid_input, where + ": param '" + prm.name + "': " + val.error().message);
    p.params.push_back({prm.name, prm.is_float, *val});
  }
  for (const auto& ds : op.data_symbols) {
    const std::string key = where + ": 'data_symbols." + ds.name + "'";
    auto cap = evaluate_expression(ds.cap, p.symbols);
    if (!cap) return make_error(errc::invalid_input, key + ".cap: " + cap.error().message);
    auto bound = evaluate_expression(ds.bound, p.symbols);
    if (!bound) return make_error(errc::invalid_input, key + ".bound: " + bound.error().message);
    if (*cap < 0 || *bound < 0) return make_error(errc::invalid_input, key + ": cap and bound must be >= 0");
    size_t input = 0;
    while (input < p.inputs.size() && p.inputs[input].name != ds.offsets) ++input;
    if (input == p.inputs.size()) return make_error(errc::invalid_input, key + ": no input '" + ds.offsets + "'");
    p.counted.push_back({ds.name, input, *cap});
    p.symbols[ds.name] = *bound;
  }
  auto bytes = evaluate_expression(op.bytes, p.symbols);
  if (!bytes) return make_error(errc::invalid_input, where + ": 'bytes': " + bytes.error().message);
  auto floor = evaluate_expression(op.bytes_floor.empty() ? op.bytes : op.bytes_floor, p.symbols);
  if (!floor) return make_error(errc::invalid_input, where + ": 'bytes_floor': " + floor.error().message);
  auto flops = evaluate_expression(op.flops, p.symbols);
  if (!flops) return make_error(errc::invalid_input, where + ": 'flops': " + flops.error().message);
  auto passes = op.int_passes.empty() ? expected<double>(0.0) : evaluate_expression(op.int_passes, p.symbols);
  if (!passes) return make_error(errc::invalid_input, where + ": 'int_passes': " + passes.error().message);
  if (!(*passes >= 0)) {
    char got[32];
    std::snprintf(got, sizeof got, "%g", *passes);
    return make_error(errc::invalid_input, where + ": 'int_passes' must be >= 0 (32-bit integer-lane passes), got " + got);
  }
  auto ws = eval_int(op.workspace_bytes, p.symbols, where + ": 'workspace_bytes'");
  if (!ws) return tl::unexpected(ws.error());
  if (*bytes <= 0) return make_error(errc::invalid_input, where + ": 'bytes' must be positive");
  if (*flops < 0 || *ws < 0) return make_error(errc::invalid_input, where + ": 'flops' and 'workspace_bytes' must be >= 0");
  if (*floor < 0 || *floor > *bytes)
    return make_error(errc::invalid_input, where + ": 'bytes_floor' must be between 0 and 'bytes'");
  p.bytes = *bytes;
  p.bytes_floor = *floor;
  p.flops = *flops;
  p.int_passes = *passes;
  p.workspace_bytes = static_cast<size_t>(*ws);
  return p;
}

expected<double> set_bytes(const operator_spec& op, const problem_instance& p,
                           const std::function<const void*(size_t)>& input) {
  if (p.counted.empty()) return p.bytes;
  symbol_table symbols = p.symbols;
  for (const auto& c : p.counted) {
    const auto* off = static_cast<const int64_t*>(input(c.input));
    const int64_t n = p.inputs[c.input].numel();
    double kept = 0;
    for (int64_t b = 0; b + 1 < n; ++b) kept += std::clamp(double(off[b + 1] - off[b]), 0.0, c.cap);
    symbols[c.name] = kept;
  }
  auto bytes = evaluate_expression(op.bytes, symbols);
  if (!bytes)
    return make_error(errc::invalid_input, op.file.string() + ": shape '" + p.shape_name + "': 'bytes': " + bytes.error().message);
  return *bytes;
}

}  // namespace kevolve::spec
