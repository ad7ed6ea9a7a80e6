// Class bindings: placeholders a class template needs that depend on the
// operator's YAML rather than on parameters. `elementwise` binds every input
// to a variable of the scalar expression `template: {expr: ...}` (by its name,
// by its first letter when that is unambiguous, or by `template: {vars: "x b"}`
// in input order) and every float/int param by its name. `matmul` binds the
// operands, transposes, epilogue expression over `acc` and row op of
// `template: {a, b, trans_a, trans_b, expr, row, gamma, beta, groups, eps}`
// (knowledge/templates/README.md).
#pragma once

#include <map>
#include <string>

#include "common/error.h"
#include "spec/operator_spec.h"

namespace kevolve::synth {

expected<std::map<std::string, std::string>> bind(const std::string& binding, const spec::operator_spec& op);

// Whether the binding can serve the operator (e.g. its expression is bindable).
bool can_bind(const std::string& binding, const spec::operator_spec& op);

}  // namespace kevolve::synth
