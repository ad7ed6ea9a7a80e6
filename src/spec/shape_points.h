// Shape points of an operator: the check every point passes (the operator
// loader's own shapes, and a sweep's), and a sweep's own timed shapes
// (`sweep.shapes` of the sweep YAML), which replace the operator's `shapes`
// for every backend of the sweep; its holdout shapes stay, so every kernel is
// still verified there.
#pragma once

#include <string>
#include <vector>

#include "common/error.h"
#include "spec/operator_spec.h"

namespace kevolve::spec {

// Why `sp` cannot be a shape of `op`, empty when it can: it must resolve
// under every variant and its inputs and outputs fit kMaxShapeBytes. The
// reason has no file name ("does not resolve: ...").
std::string shape_point_problem(const operator_spec& op, const shape_point& sp, bool holdout);

// Replaces op.shapes with `points` after the checks the operator loader
// makes of its own shapes: a name that is not a holdout's and not given
// twice, a non-negative value for every free symbol and nothing else, and a
// point that resolves under every variant within kMaxShapeBytes. The error
// says which point and what was expected (without a file name: the caller
// knows where the points came from).
expected<void> replace_timed_shapes(operator_spec& op, const std::vector<shape_point>& points);

// "name:A=1,B=2;..." — the points as one line (settings keys, resume checks).
std::string describe_shapes(const std::vector<shape_point>& points);

}  // namespace kevolve::spec
