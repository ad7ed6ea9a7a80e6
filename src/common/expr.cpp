#include "common/expr.h"

#include <algorithm>
#include <cmath>
#include <regex>

#include <muParser.h>

namespace kevolve {
namespace {

std::string rewrite_sizeof(const std::string& text) {
  static const std::regex sizeof_re(R"(sizeof\s*\(\s*([A-Za-z_][A-Za-z0-9_]*)\s*\))");
  return std::regex_replace(text, sizeof_re, "sizeof_$1");
}

double mu_min(double a, double b) { return std::min(a, b); }
double mu_max(double a, double b) { return std::max(a, b); }
double mu_ceil(double a) { return std::ceil(a); }
double mu_floor(double a) { return std::floor(a); }

void define_functions(mu::Parser& p) {
  p.DefineFun("min", mu_min);
  p.DefineFun("max", mu_max);
  p.DefineFun("ceil", mu_ceil);
  p.DefineFun("floor", mu_floor);
}

}  // namespace

expected<double> evaluate_expression(const std::string& text, const symbol_table& symbols) {
  try {
    mu::Parser p;
    define_functions(p);
    std::map<std::string, double> values(symbols.begin(), symbols.end());
    for (auto& [name, value] : values) p.DefineVar(name, &value);
    p.SetExpr(rewrite_sizeof(text));
    const double v = p.Eval();
    if (!std::isfinite(v)) return make_error(errc::invalid_input, "expression \"" + text + "\" is not finite");
    return v;
  } catch (const mu::Parser::exception_type& e) {
    return make_error(errc::invalid_input, "expression \"" + text + "\": " + e.GetMsg());
  }
}

expected<std::vector<std::string>> expression_symbols(const std::string& text) {
  try {
    mu::Parser p;
    define_functions(p);
    std::vector<double> storage;
    storage.reserve(256);
    std::vector<std::string> names;
    // Let the parser tell us every variable it meets.
    p.SetVarFactory(
        [](const mu::char_type*, void* user) -> double* {
          auto* store = static_cast<std::vector<double>*>(user);
          store->push_back(0.0);
          return &store->back();
        },
        &storage);
    p.SetExpr(rewrite_sizeof(text));
    p.Eval();
    for (const auto& [name, _] : p.GetUsedVar()) names.push_back(name);
    std::sort(names.begin(), names.end());
    return names;
  } catch (const mu::Parser::exception_type& e) {
    return make_error(errc::invalid_input, "expression \"" + text + "\": " + e.GetMsg());
  }
}

}  // namespace kevolve
