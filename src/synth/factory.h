// Synthesizers by the name a sweep config uses.
#pragma once

#include <memory>
#include <string>

#include "common/error.h"
#include "synth/synthesizer.h"

namespace kevolve::synth {

// "builtin": templates from $KEVOLVE_HOME/knowledge/templates.
expected<std::unique_ptr<synthesizer>> make_synthesizer(const std::string& name);

}  // namespace kevolve::synth
