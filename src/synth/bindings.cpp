#include "synth/bindings.h"

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <set>
#include <sstream>

#include "synth/binding_keys.h"
#include "synth/gemm_bindings.h"

namespace kevolve::synth {

namespace {

std::vector<std::string> split_names(const std::string& s) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : s + " ") {
    if (c == ' ' || c == ',') {
      if (!cur.empty()) out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  return out;
}

// The elementwise keys of `expr` over the operator's inputs: loads of each
// input (KV_LD(k), defined by the template) by name and unambiguous first
// letter, the float params by name.
expected<std::map<std::string, std::string>> expression_keys(const spec::operator_spec& op, const std::string& where,
                                                             const std::string& expr) {
  if (op.outputs.size() != 1 || op.inputs.empty() || op.inputs.size() > 8)
    return make_error(errc::invalid_input, where + "needs 1 output and 1 to 8 inputs");
  if (expr.find(';') != std::string::npos || expr.find('{') != std::string::npos)
    return make_error(errc::invalid_input, where + "'template.expr' must be one expression");
  std::vector<std::string> names;
  auto vars = op.template_params.find("vars");
  if (vars != op.template_params.end()) {
    names = split_names(vars->second);
    if (names.size() != op.inputs.size())
      return make_error(errc::invalid_input, where + "'template.vars' must name every input, in order");
  } else {
    for (const auto& t : op.inputs) names.push_back(t.name);
  }
  std::set<std::string> taken(names.begin(), names.end());
  for (const auto& p : op.params) taken.insert(p.name);
  std::ostringstream loads;
  for (size_t k = 0; k < names.size(); ++k) {
    if (!is_identifier(names[k])) return make_error(errc::invalid_input, where + "'" + names[k] + "' is no identifier");
    loads << "    [[maybe_unused]] const vf " << names[k] << " = KV_LD(" << k << ");\n";
  }
  // First-letter aliases (bias -> b) when unambiguous.
  std::map<char, int> first;
  for (const auto& n : names) first[n[0]]++;
  for (const auto& n : names) {
    const std::string alias(1, n[0]);
    if (n.size() > 1 && first[n[0]] == 1 && !taken.count(alias))
      loads << "    [[maybe_unused]] const vf& " << alias << " = " << n << ";\n";
  }
  std::ostringstream params;
  for (size_t k = 0; k < op.params.size(); ++k) {
    if (!is_identifier(op.params[k].name)) continue;
    params << "  [[maybe_unused]] const float " << op.params[k].name << " = float(a->params[" << k << "].f);\n";
  }
  std::ostringstream param_args, param_names;
  for (size_t k = 0; k < op.params.size(); ++k) {
    param_args << ", float " << op.params[k].name;
    param_names << ", " << op.params[k].name;
  }
  return std::map<std::string, std::string>{
      {"EW_NIN", std::to_string(op.inputs.size())},
      {"EW_LOADS", loads.str()},
      {"EW_PARAMS", params.str()},
      {"EW_PARAM_ARGS", param_args.str()},
      {"EW_PARAM_NAMES", param_names.str()},
      {"EW_EXPR", expr},
  };
}

expected<std::map<std::string, std::string>> bind_elementwise(const spec::operator_spec& op) {
  const std::string where = op.file.string() + ": elementwise template: ";
  auto expr = op.template_params.find("expr");
  if (expr == op.template_params.end() || expr->second.empty())
    return make_error(errc::invalid_input, where + "'template.expr' is missing");
  return expression_keys(op, where, expr->second);
}

std::string shape_text(const std::vector<std::string>& shape) {
  std::string out;
  for (const auto& d : shape) {
    out += out.empty() ? "[" : ", ";
    for (char c : d)
      if (c != ' ') out += c;
  }
  return out.empty() ? "[]" : out + "]";
}

// `elementwise_rows` (the cuda and hip templates): as `elementwise`, every
// input of the output's shape or 1-D along its last dim (a bias); other
// broadcasts are refused, naming the input.
expected<std::map<std::string, std::string>> bind_elementwise_rows(const spec::operator_spec& op) {
  auto keys = bind_elementwise(op);
  if (!keys) return keys;
  const auto& out = op.outputs[0].shape;
  for (const auto& t : op.inputs) {
    const bool same = shape_text(t.shape) == shape_text(out);
    const bool row = t.shape.size() == 1 && !out.empty() && shape_text(t.shape) == shape_text({out.back()});
    if (!same && !row)
      return make_error(errc::invalid_input, op.file.string() + ": elementwise template: input '" + t.name + "' " +
                                                 shape_text(t.shape) + " broadcasts to the output " + shape_text(out) +
                                                 " other than along rows (this template reads inputs of the output's "
                                                 "shape or 1-D along its last dim)");
  }
  return keys;
}

// `scan`: op (sum | prod), axis, reverse, exclusive, expr (default: the
// first input), post (over acc and the inputs; default acc).
expected<std::map<std::string, std::string>> bind_scan(const spec::operator_spec& op) {
  const std::string where = op.file.string() + ": scan template: ";
  const std::string kind = key_or(op, "op", "");
  if (kind != "sum" && kind != "prod")
    return make_error(errc::invalid_input, where + "'template.op' must be sum or prod, got '" + kind + "'");
  const std::string axis = key_or(op, "axis", "");
  if (axis.empty() || axis.size() > 1 || !std::isdigit(static_cast<unsigned char>(axis[0])))
    return make_error(errc::invalid_input, where + "'template.axis' must be an axis 0 to 9 of the output, got '" + axis + "'");
  if (!op.outputs.empty() && std::stoi(axis) >= static_cast<int>(op.outputs[0].shape.size()))
    return make_error(errc::invalid_input, where + "'template.axis' " + axis + " is past the output's rank " +
                                               std::to_string(op.outputs[0].shape.size()));
  auto reverse = flag_key(op, where, "reverse"), exclusive = flag_key(op, where, "exclusive");
  if (!reverse) return tl::unexpected(reverse.error());
  if (!exclusive) return tl::unexpected(exclusive.error());
  for (const auto& t : op.inputs)
    if (t.name == "acc") return make_error(errc::invalid_input, where + "an input is named 'acc', the scan's name in 'template.post'");
  auto keys = expression_keys(op, where, key_or(op, "expr", op.inputs.empty() ? "" : op.inputs[0].name));
  if (!keys) return keys;
  auto post = expression_key(op, where, "post", "acc");
  if (!post) return tl::unexpected(post.error());
  (*keys)["SC_OP"] = kind;
  (*keys)["SC_AXIS"] = axis;
  (*keys)["SC_REVERSE"] = *reverse == "1" ? "true" : "false";
  (*keys)["SC_EXCLUSIVE"] = *exclusive == "1" ? "true" : "false";
  (*keys)["SC_POST"] = *post;
  return keys;
}

// `segment_reduce`: reduce (sum | mean | max | min | prod), values (default
// input 0), offsets (default input 1), initial (optional float).
expected<std::map<std::string, std::string>> bind_segment_reduce(const spec::operator_spec& op) {
  const std::string where = op.file.string() + ": segment_reduce template: ";
  const std::string kind = key_or(op, "reduce", "");
  if (kind != "sum" && kind != "mean" && kind != "max" && kind != "min" && kind != "prod")
    return make_error(errc::invalid_input,
                      where + "'template.reduce' must be sum, mean, max, min or prod, got '" + kind + "'");
  if (op.outputs.size() != 1 || op.inputs.size() < 2)
    return make_error(errc::invalid_input, where + "needs 1 output and the values and offsets inputs");
  auto values = input_named_by(op, where, "values", false), offsets = input_named_by(op, where, "offsets", false);
  if (!values) return tl::unexpected(values.error());
  if (!offsets) return tl::unexpected(offsets.error());
  const int v = *values < 0 ? 0 : *values, o = *offsets < 0 ? 1 : *offsets;
  if (v == o) return make_error(errc::invalid_input, where + "'template.values' and 'template.offsets' name one input");
  if (op.inputs[o].dtype != "int64" || op.inputs[o].shape.size() != 1)
    return make_error(errc::invalid_input, where + "the offsets input '" + op.inputs[o].name + "' must be 1-D int64");
  const std::string initial = key_or(op, "initial", "");
  std::string literal = "0.0f";
  if (!initial.empty()) {
    char* end = nullptr;
    const double x = std::strtod(initial.c_str(), &end);
    if (end == initial.c_str() || *end != '\0' || !std::isfinite(x))
      return make_error(errc::invalid_input, where + "'template.initial' must be a finite number, got '" + initial + "'");
    std::ostringstream f;
    f.precision(9);
    f << std::showpoint << x << "f";
    literal = f.str();
  }
  return std::map<std::string, std::string>{
      {"SG_VALUES", std::to_string(v)}, {"SG_OFFSETS", std::to_string(o)},
      {"SG_HAS_INITIAL", initial.empty() ? "false" : "true"}, {"SG_INITIAL", literal}};
}

// `axis_normalize`: stat (sum | mean | max | logsumexp | mean_var),
// axis_first <= axis_last, x (default input 0), gamma and beta (optional
// inputs), pre (over x; default x), post (over x, s, v, w, b).
expected<std::map<std::string, std::string>> bind_axis_normalize(const spec::operator_spec& op) {
  const std::string where = op.file.string() + ": axis_normalize template: ";
  const std::string stat = key_or(op, "stat", "");
  if (stat != "sum" && stat != "mean" && stat != "max" && stat != "logsumexp" && stat != "mean_var")
    return make_error(errc::invalid_input,
                      where + "'template.stat' must be sum, mean, max, logsumexp or mean_var, got '" + stat + "'");
  if (op.outputs.size() != 1 || op.inputs.empty()) return make_error(errc::invalid_input, where + "needs 1 output and an input");
  const std::string first = key_or(op, "axis_first", ""), last = key_or(op, "axis_last", "");
  auto axis = [&](const std::string& v) {
    return v.size() == 1 && std::isdigit(static_cast<unsigned char>(v[0])) ? v[0] - '0' : -1;
  };
  const int a0 = axis(first), a1 = axis(last), rank = static_cast<int>(op.outputs[0].shape.size());
  if (a0 < 0 || a1 < a0 || a1 >= rank)
    return make_error(errc::invalid_input, where + "'template.axis_first' and 'axis_last' must be axes 0 <= first <= last < " +
                                               std::to_string(rank) + " (the output's rank), got '" + first + "', '" + last + "'");
  auto x = input_named_by(op, where, "x", false), gamma = input_named_by(op, where, "gamma", false),
       beta = input_named_by(op, where, "beta", false);
  for (auto* k : {&x, &gamma, &beta})
    if (!*k) return tl::unexpected(k->error());
  auto pre = expression_key(op, where, "pre", "x"), post = expression_key(op, where, "post", "");
  if (!pre) return tl::unexpected(pre.error());
  if (!post) return tl::unexpected(post.error());
  if (post->empty()) return make_error(errc::invalid_input, where + "'template.post' is missing (an expression over x, s, v, w, b)");
  return std::map<std::string, std::string>{
      {"NM_STAT", stat}, {"NM_AXIS_FIRST", first}, {"NM_AXIS_LAST", last},
      {"NM_X", std::to_string(*x < 0 ? 0 : *x)}, {"NM_GAMMA", std::to_string(*gamma)}, {"NM_BETA", std::to_string(*beta)},
      {"NM_PRE", *pre}, {"NM_POST", *post}};
}

}  // namespace

expected<std::map<std::string, std::string>> bind(const std::string& binding, const spec::operator_spec& op) {
  if (binding == "elementwise" || binding == "elementwise_broadcast") return bind_elementwise(op);
  if (binding == "elementwise_rows") return bind_elementwise_rows(op);
  if (binding == "scan") return bind_scan(op);
  if (binding == "segment_reduce") return bind_segment_reduce(op);
  if (binding == "axis_normalize") return bind_axis_normalize(op);
  if (binding == "matmul") return bind_matmul(op);
  if (binding == "conv") return bind_conv(op);
  if (binding == "group_norm") return bind_group_norm(op);
  if (binding == "batch_norm") return bind_batch_norm(op);
  if (binding == "pooling") return bind_pooling(op);
  return make_error(errc::invalid_input, "unknown template binding '" + binding + "'");
}

bool can_bind(const std::string& binding, const spec::operator_spec& op) {
  return binding.empty() || bind(binding, op).has_value();
}

}  // namespace kevolve::synth
