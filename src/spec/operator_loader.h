// Loads and validates operator YAML files (format: config/operators/README.md).
#pragma once

#include <filesystem>
#include <vector>

#include "common/error.h"
#include "spec/operator_spec.h"

namespace kevolve::spec {

// All problems of the file, one per line ("file:line: 'key' expectation"),
// or the validated operator. Every shape point is resolved under every
// variant, so a returned spec never fails resolve().
expected<operator_spec> load_operator(const std::filesystem::path& yaml_file);

// Operators of the catalog directory, sorted by name.
std::filesystem::path default_operator_dir();
expected<std::vector<operator_spec>> load_catalog(const std::filesystem::path& dir);

// Finds `name` (an operator name or a path to a YAML file).
expected<operator_spec> find_operator(const std::string& name_or_path);

}  // namespace kevolve::spec
