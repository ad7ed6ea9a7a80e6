#include "synth/bindings.h"

#include <cctype>
#include <cstdlib>
#include <set>
#include <sstream>

namespace kevolve::synth {

namespace {

bool is_identifier(const std::string& s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  return true;
}

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

std::string key_or(const spec::operator_spec& op, const std::string& key, const std::string& fallback) {
  auto it = op.template_params.find(key);
  return it == op.template_params.end() || it->second.empty() ? fallback : it->second;
}

// Identifiers of a C expression (function names included).
std::set<std::string> identifiers(const std::string& e) {
  std::set<std::string> out;
  for (size_t i = 0; i < e.size();) {
    if (std::isalpha(static_cast<unsigned char>(e[i])) || e[i] == '_') {
      size_t j = i;
      while (j < e.size() && (std::isalnum(static_cast<unsigned char>(e[j])) || e[j] == '_')) ++j;
      out.insert(e.substr(i, j - i));
      i = j;
    } else if (std::isdigit(static_cast<unsigned char>(e[i])) || e[i] == '.') {
      while (i < e.size() && (std::isalnum(static_cast<unsigned char>(e[i])) || e[i] == '.')) ++i;  // 1e-05f
    } else {
      ++i;
    }
  }
  return out;
}

// `matmul`: the operands, transposes, epilogue expression over `acc` (1-D
// inputs read per column, params by name) and row op of
// knowledge/templates/cpu/matmul.json.
expected<std::map<std::string, std::string>> bind_matmul(const spec::operator_spec& op) {
  const std::string where = op.file.string() + ": matmul template: ";
  if (op.outputs.size() != 1) return make_error(errc::invalid_input, where + "needs 1 output");
  auto index_of = [&](const std::string& key, bool required) -> expected<int> {
    auto it = op.template_params.find(key);
    if (it == op.template_params.end() || it->second.empty()) {
      if (required) return make_error(errc::invalid_input, where + "'template." + key + "' is missing (an input's name)");
      return -1;
    }
    for (size_t k = 0; k < op.inputs.size(); ++k)
      if (op.inputs[k].name == it->second) return static_cast<int>(k);
    return make_error(errc::invalid_input, where + "'template." + key + "': '" + it->second + "' is no input");
  };
  auto flag = [&](const std::string& key) -> expected<std::string> {
    const std::string v = key_or(op, key, "0");
    if (v != "0" && v != "1") return make_error(errc::invalid_input, where + "'template." + key + "' must be 0 or 1, got '" + v + "'");
    return v;
  };
  auto a = index_of("a", true), b = index_of("b", true), gamma = index_of("gamma", false), beta = index_of("beta", false);
  for (auto* r : {&a, &b, &gamma, &beta})
    if (!*r) return tl::unexpected(r->error());
  if (*a == *b) return make_error(errc::invalid_input, where + "'template.a' and 'template.b' must be two inputs");
  auto ta = flag("trans_a"), tb = flag("trans_b");
  if (!ta) return tl::unexpected(ta.error());
  if (!tb) return tl::unexpected(tb.error());
  static const std::map<std::string, std::string> rows = {{"none", "kRowNone"},       {"sum", "kRowSum"},
                                                          {"mean", "kRowMean"},       {"softmax", "kRowSoftmax"},
                                                          {"log_softmax", "kRowLogSoftmax"}, {"group_norm", "kRowGroupNorm"}};
  const std::string row = key_or(op, "row", "none");
  auto kind = rows.find(row);
  if (kind == rows.end())
    return make_error(errc::invalid_input, where + "'template.row' must be one of none, sum, mean, softmax, log_softmax, "
                                                   "group_norm; got '" + row + "'");
  std::string groups = key_or(op, "groups", "1"), eps = key_or(op, "eps", "1e-5");
  char* end = nullptr;
  const long g = std::strtol(groups.c_str(), &end, 10);
  if (*end != '\0' || g < 1) return make_error(errc::invalid_input, where + "'template.groups' must be a positive integer, got '" + groups + "'");
  const double e = std::strtod(eps.c_str(), &end);
  if (*end != '\0' || !(e >= 0)) return make_error(errc::invalid_input, where + "'template.eps' must be a number >= 0, got '" + eps + "'");
  if ((*gamma >= 0 || *beta >= 0) && row != "group_norm")
    return make_error(errc::invalid_input, where + "'template.gamma' and 'template.beta' belong to row: group_norm");
  const std::string expr = key_or(op, "expr", "acc");
  if (expr.find(';') != std::string::npos || expr.find('{') != std::string::npos)
    return make_error(errc::invalid_input, where + "'template.expr' must be one expression");
  // Inputs the expression names are read per column (1-D, N long: checked by the kernel).
  const auto used = identifiers(expr);
  std::ostringstream loads, cols;
  int ncols = 0;
  for (size_t k = 0; k < op.inputs.size(); ++k) {
    const auto& n = op.inputs[k].name;
    if (!used.count(n)) continue;
    if (!is_identifier(n) || n == "acc") return make_error(errc::invalid_input, where + "input '" + n + "' cannot be named in 'template.expr'");
    if (static_cast<int>(k) == *a || static_cast<int>(k) == *b)
      return make_error(errc::invalid_input, where + "'template.expr' names the operand '" + n + "'; it may name `acc`, 1-D inputs and params");
    loads << "    [[maybe_unused]] const vf " << n << " = KV_COL(" << k << ");\n";
    cols << (ncols++ ? ", " : "") << k;
  }
  for (size_t k = 0; k < op.params.size(); ++k)
    if (is_identifier(op.params[k].name) && used.count(op.params[k].name))
      loads << "    [[maybe_unused]] const float " << op.params[k].name << " = prm[" << k << "];\n";
  return std::map<std::string, std::string>{
      {"MM_A", std::to_string(*a)},         {"MM_B", std::to_string(*b)},
      {"MM_TA", *ta},                       {"MM_TB", *tb},
      {"MM_LOADS", loads.str()},            {"MM_EXPR", expr},
      {"MM_COLS", ncols ? cols.str() : "-1"}, {"MM_NCOLS", std::to_string(ncols)},
      {"MM_ROW", kind->second},             {"MM_GAMMA", std::to_string(*gamma)},
      {"MM_BETA", std::to_string(*beta)},   {"MM_GROUPS", std::to_string(g)},
      {"MM_EPS", eps},                      {"MM_NPARAMS", std::to_string(op.params.size())},
      {"MM_IDENTITY", expr == "acc" ? "true" : "false"},
  };
}

}  // namespace

expected<std::map<std::string, std::string>> bind(const std::string& binding, const spec::operator_spec& op) {
  if (binding == "elementwise") return bind_elementwise(op);
  if (binding == "matmul") return bind_matmul(op);
  return make_error(errc::invalid_input, "unknown template binding '" + binding + "'");
}

bool can_bind(const std::string& binding, const spec::operator_spec& op) {
  return binding.empty() || bind(binding, op).has_value();
}

}  // namespace kevolve::synth
