// Turns a template and a parameter set into a candidate's source, and reads
// the template and parameters back from a candidate's first line:
//   // kevolve-template: cpu/row_softmax {"unroll":2,"vec":16}
#pragma once

#include <optional>
#include <string>

#include "common/error.h"
#include "spec/operator_spec.h"
#include "synth/template_library.h"

namespace kevolve::synth {

constexpr const char* kHeaderPrefix = "// kevolve-template: ";

struct template_header {
  std::string name;  // "cpu/row_softmax"
  param_set params;
};

std::string format_header(const std::string& name, const param_set& params);
// The header of a candidate's source (its first line), if it has one.
std::optional<template_header> parse_header(const std::string& code);

// Source of the candidate: the header line, one `#define KVP_<NAME> <value>`
// per parameter (strings also as `#define KVP_<NAME>_<VALUE> 1`), then the
// template with {{include:file}}, {{param}}, {{key:<template key>}} and the
// binding's placeholders substituted. Unknown placeholders are errors.
expected<std::string> render(const template_info& t, const spec::operator_spec& op, const param_set& params);

}  // namespace kevolve::synth
