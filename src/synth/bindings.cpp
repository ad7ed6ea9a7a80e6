#include "synth/bindings.h"

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

expected<std::map<std::string, std::string>> bind_elementwise(const spec::operator_spec& op) {
  const std::string where = op.file.string() + ": elementwise template: ";
  auto expr = op.template_params.find("expr");
  if (expr == op.template_params.end() || expr->second.empty())
    return make_error(errc::invalid_input, where + "'template.expr' is missing");
  if (op.outputs.size() != 1 || op.inputs.empty() || op.inputs.size() > 8)
    return make_error(errc::invalid_input, where + "needs 1 output and 1 to 8 inputs");
  if (expr->second.find(';') != std::string::npos || expr->second.find('{') != std::string::npos)
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
      {"EW_EXPR", expr->second},
  };
}

}  // namespace

expected<std::map<std::string, std::string>> bind(const std::string& binding, const spec::operator_spec& op) {
  if (binding == "elementwise") return bind_elementwise(op);
  if (binding == "matmul") return bind_matmul(op);
  if (binding == "conv") return bind_conv(op);
  if (binding == "group_norm") return bind_group_norm(op);
  if (binding == "pooling") return bind_pooling(op);
  return make_error(errc::invalid_input, "unknown template binding '" + binding + "'");
}

bool can_bind(const std::string& binding, const spec::operator_spec& op) {
  return binding.empty() || bind(binding, op).has_value();
}

}  // namespace kevolve::synth
