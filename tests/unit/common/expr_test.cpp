// Shape, bytes and flops formulas of operator files are evaluated here: a
// wrong value silently skews every roofline number, a missing error turns a
// typo in a YAML file into a crash or a zero.
#include <gtest/gtest.h>

#include "common/expr.h"

#include <cmath>
#include <fstream>
#include <sstream>
#include <vector>

#include "common/fs.h"
#include "common/subprocess.h"

namespace kevolve {
namespace {

TEST(evaluate_expression, uses_bound_symbols) {
  auto v = evaluate_expression("2 * B * N + 3", {{"B", 8}, {"N", 1024}});
  ASSERT_TRUE(v.has_value()) << v.error().message;
  EXPECT_DOUBLE_EQ(*v, 2 * 8 * 1024 + 3);
}

TEST(evaluate_expression, honours_precedence_parentheses_and_power) {
  auto v = evaluate_expression("(B + 1) * 2 ^ 3 - N / 4", {{"B", 2}, {"N", 8}});
  ASSERT_TRUE(v.has_value()) << v.error().message;
  EXPECT_DOUBLE_EQ(*v, 3 * 8 - 2);
}

TEST(evaluate_expression, rewrites_sizeof_to_a_bound_symbol) {
  const symbol_table s = {{"B", 3}, {"N", 5}, {"sizeof_T", 2}, {"sizeof_fp64", 8}};
  auto v = evaluate_expression("2 * B * N * sizeof(T)", s);
  ASSERT_TRUE(v.has_value()) << v.error().message;
  EXPECT_DOUBLE_EQ(*v, 2 * 3 * 5 * 2);
  // Spaces inside and before the parentheses, as people write them.
  auto spaced = evaluate_expression("sizeof ( fp64 ) + sizeof(T)", s);
  ASSERT_TRUE(spaced.has_value()) << spaced.error().message;
  EXPECT_DOUBLE_EQ(*spaced, 10);
}

TEST(evaluate_expression, sizeof_of_an_unbound_type_is_an_error) {
  auto v = evaluate_expression("B * sizeof(U)", {{"B", 3}, {"sizeof_T", 4}});
  ASSERT_FALSE(v.has_value());
  EXPECT_EQ(v.error().code, errc::invalid_input);
  EXPECT_NE(v.error().message.find("sizeof_U"), std::string::npos) << v.error().message;
}

TEST(evaluate_expression, min_max_ceil_floor) {
  const symbol_table s = {{"N", 1003}, {"B", 37}};
  auto check = [&](const char* text, double want) {
    auto v = evaluate_expression(text, s);
    ASSERT_TRUE(v.has_value()) << text << ": " << v.error().message;
    EXPECT_DOUBLE_EQ(*v, want) << text;
  };
  check("min(N, B)", 37);
  check("max(N, B)", 1003);
  check("ceil(N / 16)", 63);
  check("floor(N / 16)", 62);
  check("ceil(N / 16) * 16 - N", 5);  // padding to a multiple of 16
  check("min(max(B, 64), 128)", 64);
}

TEST(evaluate_expression, unknown_symbol_is_an_error_naming_it) {
  auto v = evaluate_expression("B * Q", {{"B", 2}});
  ASSERT_FALSE(v.has_value());
  EXPECT_EQ(v.error().code, errc::invalid_input);
  EXPECT_NE(v.error().message.find("Q"), std::string::npos) << v.error().message;
  EXPECT_NE(v.error().message.find("B * Q"), std::string::npos) << v.error().message;
}

TEST(evaluate_expression, syntax_error_is_an_error_quoting_the_text) {
  for (const char* text : {"2 * (B", "B * * 2", "", "min(B)", "B N"}) {
    auto v = evaluate_expression(text, {{"B", 2}, {"N", 3}});
    ASSERT_FALSE(v.has_value()) << "\"" << text << "\" evaluated to " << *v;
    EXPECT_EQ(v.error().code, errc::invalid_input) << text;
    EXPECT_NE(v.error().message.find(std::string("\"") + text + "\""), std::string::npos) << v.error().message;
  }
}

TEST(evaluate_expression, non_finite_result_is_an_error) {
  auto v = evaluate_expression("B / (N - 3)", {{"B", 2}, {"N", 3}});
  ASSERT_FALSE(v.has_value()) << "got " << *v;
  EXPECT_EQ(v.error().code, errc::invalid_input);
  EXPECT_NE(v.error().message.find("not finite"), std::string::npos) << v.error().message;
}

TEST(expression_symbols, lists_variables_sorted_unique_after_sizeof_rewrite) {
  auto s = expression_symbols("2 * N * B * sizeof(T) + B");
  ASSERT_TRUE(s.has_value()) << s.error().message;
  EXPECT_EQ(*s, (std::vector<std::string>{"B", "N", "sizeof_T"}));
}

TEST(expression_symbols, function_names_and_numbers_are_not_symbols) {
  auto s = expression_symbols("min(ceil(total / 4), max_len) + floor(2.5) + max(1, 2)");
  ASSERT_TRUE(s.has_value()) << s.error().message;
  EXPECT_EQ(*s, (std::vector<std::string>{"max_len", "total"}));
  auto none = expression_symbols("64 * 1024");
  ASSERT_TRUE(none.has_value()) << none.error().message;
  EXPECT_TRUE(none->empty());
}

TEST(expression_symbols, syntax_error_is_an_error) {
  auto s = expression_symbols("B * (N");
  ASSERT_FALSE(s.has_value());
  EXPECT_EQ(s.error().code, errc::invalid_input);
  EXPECT_NE(s.error().message.find("B * (N"), std::string::npos) << s.error().message;
}

// A sequence kernel computes its intermediates' shapes from these C forms at
// run time: compiled and run, each must give what the YAML's evaluator gives.
TEST(c_expression, compiled_gives_the_values_evaluate_expression_gives) {
  const symbol_table s = {{"B", 37}, {"N", 1003}, {"depth", 13}, {"sizeof_T", 2}};
  const std::vector<std::string> cases = {
      "2*depth - 1",          "floor(depth/2 - 1/2)", "ceil(N/128)*128",  "(B + 1) * 2 ^ 3 - N / 4",
      "-B + 3",               "max(B, N) - min(B, 7)", "N*sizeof(T)",      "floor((depth + 2*1 - 3)/2 + 1)",
      "2^-1 * B",             "abs(3 - B) + sqrt(16)", "1e3 / 8 + .5",     "B - -2"};
  auto symbol = [&](const std::string& n) -> std::optional<std::string> {
    if (!s.count(n)) return std::nullopt;
    return "v_" + n;
  };
  std::ostringstream src;
  src << "#include <math.h>\n#include <stdio.h>\nint main(void) {\n";
  for (const auto& [n, v] : s) src << "  const double v_" << n << " = " << v << ";\n";
  for (const auto& c : cases) {
    auto text = c_expression(c, symbol);
    ASSERT_TRUE(text.has_value()) << c << ": " << text.error().message;
    src << "  printf(\"%.17g\\n\", (double)(" << *text << "));\n";
  }
  src << "  return 0;\n}\n";
  auto dir = temp_dir::create("kevolve-cexpr-");
  ASSERT_TRUE(dir.has_value()) << dir.error().message;
  const auto file = dir->path() / "e.c", exe = dir->path() / "e";
  std::ofstream(file) << src.str();
  auto cc = run_subprocess({"cc", "-std=c99", "-O0", file.string(), "-o", exe.string(), "-lm"});
  ASSERT_TRUE(cc.has_value() && cc->ok()) << (cc ? cc->output : cc.error().message) << "\n" << src.str();
  auto run = run_subprocess({exe.string()});
  ASSERT_TRUE(run.has_value() && run->ok()) << (run ? run->output : run.error().message);
  std::istringstream got(run->output);
  for (const auto& c : cases) {
    double v = NAN;
    ASSERT_TRUE(got >> v) << c;
    auto want = evaluate_expression(c, s);
    ASSERT_TRUE(want.has_value()) << c << ": " << want.error().message;
    EXPECT_DOUBLE_EQ(v, *want) << c << " as C: " << *c_expression(c, symbol);
  }
}

TEST(c_expression, unknown_symbols_and_functions_are_errors_naming_them) {
  auto none = [](const std::string&) -> std::optional<std::string> { return std::nullopt; };
  auto sym = c_expression("2*depth", none);
  ASSERT_FALSE(sym.has_value());
  EXPECT_NE(sym.error().message.find("unknown symbol 'depth'"), std::string::npos) << sym.error().message;
  auto fn = c_expression("sin(1)", none);
  ASSERT_FALSE(fn.has_value());
  EXPECT_NE(fn.error().message.find("function 'sin'"), std::string::npos) << fn.error().message;
  auto bad = c_expression("(1 + 2", none);
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.error().message.find("misses a ')'"), std::string::npos) << bad.error().message;
  auto sz = c_expression("sizeof(T)", none);
  ASSERT_FALSE(sz.has_value());
  EXPECT_NE(sz.error().message.find("sizeof(T)"), std::string::npos) << sz.error().message;
}

}  // namespace
}  // namespace kevolve
