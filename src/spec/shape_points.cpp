#include "spec/shape_points.h"

#include <set>

namespace kevolve::spec {

std::string shape_point_problem(const operator_spec& op, const shape_point& sp, bool holdout) {
  for (const auto& var : op.variants) {
    auto p = resolve(op, var, sp, holdout);
    if (!p) {
      // resolve() prefixes the file name; keep only what follows it.
      std::string msg = p.error().message;
      const std::string prefix = op.file.string() + ": ";
      if (msg.rfind(prefix, 0) == 0) msg = msg.substr(prefix.size());
      return "does not resolve: " + msg;
    }
    double bytes = 0;
    for (const auto& t : p->inputs) bytes += double(t.bytes());
    for (const auto& t : p->outputs) bytes += double(t.bytes());
    if (bytes > kMaxShapeBytes)
      return "does not fit the memory limit: its inputs and outputs take " + std::to_string(int64_t(bytes / double(1 << 20))) +
             " MiB in variant '" + var.name + "', expected at most " +
             std::to_string(int64_t(kMaxShapeBytes / double(1 << 20))) +
             " MiB (the evaluator keeps several input sets and an fp64 copy)";
  }
  return "";
}

expected<void> replace_timed_shapes(operator_spec& op, const std::vector<shape_point>& points) {
  if (points.empty()) return make_error(errc::invalid_input, "must list at least one shape {name, <symbol>: integer...}");
  const std::set<std::string> free(op.symbols.begin(), op.symbols.end());
  std::string symbols;
  for (const auto& s : op.symbols) symbols += (symbols.empty() ? "" : ", ") + s;
  std::set<std::string> names;
  for (size_t i = 0; i < points.size(); ++i) {
    const shape_point& sp = points[i];
    const std::string at = "[" + std::to_string(i) + "]";
    if (sp.name.empty()) return make_error(errc::invalid_input, at + ".name: is required");
    if (!names.insert(sp.name).second) return make_error(errc::invalid_input, at + ".name: '" + sp.name + "' is given twice");
    for (const auto& h : op.holdout_shapes)
      if (h.name == sp.name)
        return make_error(errc::invalid_input, at + ".name: '" + sp.name + "' is the name of a holdout shape of operator '" +
                                                   op.name + "'");
    for (const auto& [k, v] : sp.values) {
      if (!free.count(k))
        return make_error(errc::invalid_input, at + "." + k + ": is not a free symbol of operator '" + op.name +
                                                   "' (symbols: " + symbols + ")");
      if (v < 0) return make_error(errc::invalid_input, at + "." + k + ": must be a non-negative integer, got " + std::to_string(v));
    }
    for (const auto& s : op.symbols)
      if (!sp.values.count(s))
        return make_error(errc::invalid_input, at + ": gives no value for symbol '" + s + "' (symbols: " + symbols + ")");
    if (const std::string why = shape_point_problem(op, sp, false); !why.empty())
      return make_error(errc::invalid_input, at + " ('" + sp.name + "'): " + why);
  }
  op.shapes = points;
  return {};
}

std::string describe_shapes(const std::vector<shape_point>& points) {
  std::string out;
  for (const auto& sp : points) {
    out += (out.empty() ? "" : ";") + sp.name + ":";
    bool first = true;
    for (const auto& [k, v] : sp.values) {
      out += (first ? "" : ",") + k + "=" + std::to_string(v);
      first = false;
    }
  }
  return out;
}

}  // namespace kevolve::spec
