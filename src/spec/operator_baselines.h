// An operator's baselines, one per backend: `baselines: {cpu: {...}, cuda:
// {...}, ...}` (each {name, source, libraries}), and the pre-registry keys
// (`baseline`, `cuda_baseline`, `hip_baseline`, `mtia_baseline`), still read
// with one deprecation note per file. Internal to src/spec.
#pragma once

#include <filesystem>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "spec/operator_spec.h"
#include "spec/yaml_reader.h"

namespace kevolve::spec {

// The pre-registry keys a file used, with their backends: {cuda_baseline, cuda}.
using deprecated_baselines = std::vector<std::pair<std::string, std::string>>;

// Fills op.baselines (and op.baseline, the host backend's, which is
// required); libraries are checked against what each backend's compile
// recipe links, `allowed_libraries` against what some backend's links.
deprecated_baselines read_baselines(yaml_reader& r, const YAML::Node& root, const std::filesystem::path& file,
                                    operator_spec& op);

// One note per file and process, however often the file is loaded; called
// once the file loaded without errors (an error is the first thing said).
void note_deprecated_baselines(const std::filesystem::path& file, const deprecated_baselines& keys);

// The top-level keys read here.
std::set<std::string> baseline_keys();

}  // namespace kevolve::spec
