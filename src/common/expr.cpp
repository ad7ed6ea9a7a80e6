#include "common/expr.h"

#include <algorithm>
#include <cctype>
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

namespace {

// Recursive descent over muParser's arithmetic: sum := product (+|- product)*,
// product := unary (*|/ unary)*, unary := (-|+) unary | power,
// power := atom (^ unary)?, atom := number | symbol | f(args) | (sum).
class c_translator {
 public:
  c_translator(std::string text, const std::function<std::optional<std::string>(const std::string&)>& symbol)
      : s_(std::move(text)), symbol_(symbol) {}

  expected<std::string> run() {
    std::string out = sum();
    skip();
    if (error_.empty() && i_ != s_.size()) error_ = "unexpected '" + s_.substr(i_, 1) + "'";
    if (!error_.empty()) return make_error(errc::invalid_input, "expression \"" + s_ + "\": " + error_);
    return out;
  }

 private:
  void skip() {
    while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_]))) ++i_;
  }
  bool eat(char c) {
    skip();
    if (i_ < s_.size() && s_[i_] == c) {
      ++i_;
      return true;
    }
    return false;
  }
  std::string sum() {
    std::string out = product();
    while (error_.empty()) {
      if (eat('+')) out = "(" + out + " + " + product() + ")";
      else if (eat('-')) out = "(" + out + " - " + product() + ")";
      else break;
    }
    return out;
  }
  std::string product() {
    std::string out = unary();
    while (error_.empty()) {
      if (eat('*')) out = "(" + out + " * " + unary() + ")";
      else if (eat('/')) out = "(" + out + " / " + unary() + ")";
      else break;
    }
    return out;
  }
  std::string unary() {
    if (eat('-')) return "(-" + unary() + ")";
    if (eat('+')) return unary();
    std::string base = atom();
    if (error_.empty() && eat('^')) return "pow(" + base + ", " + unary() + ")";
    return base;
  }
  std::string atom() {
    skip();
    if (i_ >= s_.size()) return fail("ends early");
    const char c = s_[i_];
    if (eat('(')) {
      std::string inner = sum();
      if (!eat(')')) return fail("misses a ')'");
      return "(" + inner + ")";
    }
    if (std::isdigit(static_cast<unsigned char>(c)) || c == '.') {
      const size_t b = i_;
      while (i_ < s_.size() && (std::isdigit(static_cast<unsigned char>(s_[i_])) || s_[i_] == '.')) ++i_;
      if (i_ < s_.size() && (s_[i_] == 'e' || s_[i_] == 'E')) {
        ++i_;
        if (i_ < s_.size() && (s_[i_] == '+' || s_[i_] == '-')) ++i_;
        while (i_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[i_]))) ++i_;
      }
      std::string num = s_.substr(b, i_ - b);
      if (num.find_first_of(".eE") == std::string::npos) num += ".0";
      return num;
    }
    if (!std::isalpha(static_cast<unsigned char>(c)) && c != '_') return fail("unexpected '" + std::string(1, c) + "'");
    const size_t b = i_;
    while (i_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[i_])) || s_[i_] == '_')) ++i_;
    std::string name = s_.substr(b, i_ - b);
    if (!eat('(')) {
      auto v = symbol_(name);
      if (!v) return fail("unknown symbol '" + name + "'");
      return "(" + *v + ")";
    }
    if (name == "sizeof") {
      skip();
      const size_t nb = i_;
      while (i_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[i_])) || s_[i_] == '_')) ++i_;
      const std::string arg = s_.substr(nb, i_ - nb);
      if (arg.empty() || !eat(')')) return fail("sizeof takes a type name");
      auto v = symbol_("sizeof_" + arg);
      if (!v) return fail("unknown symbol 'sizeof(" + arg + ")'");
      return "(" + *v + ")";
    }
    static const std::map<std::string, std::pair<std::string, int>> functions = {
        {"floor", {"floor", 1}}, {"ceil", {"ceil", 1}}, {"abs", {"fabs", 1}},
        {"sqrt", {"sqrt", 1}},   {"min", {"fmin", 2}},  {"max", {"fmax", 2}}};
    auto f = functions.find(name);
    if (f == functions.end()) return fail("function '" + name + "' has no C form (floor, ceil, abs, sqrt, min, max)");
    std::vector<std::string> args{sum()};
    while (error_.empty() && eat(',')) args.push_back(sum());
    if (!eat(')')) return fail("misses a ')' after the arguments of " + name);
    if (int(args.size()) != f->second.second)
      return fail(name + " takes " + std::to_string(f->second.second) + " arguments, got " + std::to_string(args.size()));
    std::string out = f->second.first + "(";
    for (size_t k = 0; k < args.size(); ++k) out += (k ? ", " : "") + args[k];
    return out + ")";
  }
  std::string fail(const std::string& why) {
    if (error_.empty()) error_ = why;
    return "";
  }

  std::string s_;
  const std::function<std::optional<std::string>(const std::string&)>& symbol_;
  size_t i_ = 0;
  std::string error_;
};

}  // namespace

expected<std::string> c_expression(const std::string& text,
                                   const std::function<std::optional<std::string>(const std::string&)>& symbol) {
  return c_translator(text, symbol).run();
}

}  // namespace kevolve
