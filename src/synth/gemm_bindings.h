// Bindings of the GEMM-shaped class templates (knowledge/templates/README.md):
// `matmul` (cpu/matmul) and `conv` (cpu/conv) bind the operands, the
// epilogue expression over `acc` with the inputs it reads per output column
// (matmul) or channel (conv), and the row op of the operator's `template:`.
#pragma once

#include <map>
#include <string>

#include "common/error.h"
#include "spec/operator_spec.h"

namespace kevolve::synth {

expected<std::map<std::string, std::string>> bind_matmul(const spec::operator_spec& op);
expected<std::map<std::string, std::string>> bind_conv(const spec::operator_spec& op);
// `group_norm` (cpu/group_norm): x (default input 0), groups, eps, gamma, beta.
expected<std::map<std::string, std::string>> bind_group_norm(const spec::operator_spec& op);
// `batch_norm` (cpu/batch_norm): x (default input 0), eps, gamma, beta (the
// same keys as group_norm's, GN_GROUPS 0).
expected<std::map<std::string, std::string>> bind_batch_norm(const spec::operator_spec& op);
// `pooling` (cpu/pooling): kind, kernel, stride, padding, dilation, ceil_mode,
// count_include_pad, divisor.
expected<std::map<std::string, std::string>> bind_pooling(const spec::operator_spec& op);

}  // namespace kevolve::synth
