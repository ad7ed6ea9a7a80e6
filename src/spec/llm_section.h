// The sweep YAML's `llm:` section (internal to src/spec).
#pragma once

#include <yaml-cpp/yaml.h>

#include "llm/config.h"
#include "spec/yaml_reader.h"

namespace kevolve::spec {

void load_llm(yaml_reader& r, const YAML::Node& root, llm::llm_config& out);

}  // namespace kevolve::spec
