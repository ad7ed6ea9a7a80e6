// One candidate for a `sequence` operator (spec/operator_parts.h): the
// rendered kernels of its parts, each in a namespace of its own with its
// entry point made internal, and a kevolve_kernel that lays the
// intermediates out in the workspace (their shapes computed at run time from
// the operator's own tensors) and calls the parts in order on the given
// stream, each with its own kv_args and the rest of the workspace.
#pragma once

#include <string>
#include <vector>

#include "common/error.h"
#include "spec/operator_spec.h"

namespace kevolve::synth {

// Backends a sequence runs on: those whose kernels take host-visible
// tensor descriptors and one stream (cpu, cuda, hip).
bool sequence_backend(const std::string& backend);

// `parts`: the rendered code of op.parts[i] for `backend`, in order (each
// with its template header line first). The result has no header line.
expected<std::string> compose_sequence(const spec::operator_spec& op, const std::string& backend,
                                       const std::vector<std::string>& parts);

}  // namespace kevolve::synth
