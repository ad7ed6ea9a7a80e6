// Arithmetic expressions over named symbols (shapes, bytes/flops formulas),
// evaluated with muParser. `sizeof(X)` is rewritten to the variable
// `sizeof_X`, which callers bind.
#pragma once

#include <map>
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

}  // namespace kevolve
