// Arithmetic expressions over named symbols (shapes, bytes/flops formulas),
// evaluated with muParser. `sizeof(X)` is rewritten to the variable
// `sizeof_X`, which callers bind.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/error.h"

namespace kevolve {

using symbol_table = std::map<std::string, double>;

// Evaluates `text`; an unknown symbol or a syntax error is an error whose
// message explains what is wrong (the caller adds file, line and key).
expected<double> evaluate_expression(const std::string& text, const symbol_table& symbols);

// Symbols the expression uses (after the sizeof rewrite), sorted, unique.
expected<std::vector<std::string>> expression_symbols(const std::string& text);

// The expression as a C expression of type double, with the same value as
// evaluate_expression gives (numbers as doubles, `^` as pow, min/max as
// fmin/fmax; floor, ceil, abs, sqrt), each symbol (sizeof(X) as sizeof_X)
// replaced by what `symbol` returns for it, parenthesized; an unknown symbol
// (symbol returns nullopt), function or token is an error. For kernels that
// compute shapes at run time (<math.h>).
expected<std::string> c_expression(const std::string& text,
                                   const std::function<std::optional<std::string>(const std::string&)>& symbol);

}  // namespace kevolve
