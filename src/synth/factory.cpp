#include "synth/factory.h"

#include "synth/builtin_synthesizer.h"

namespace kevolve::synth {

expected<std::unique_ptr<synthesizer>> make_synthesizer(const std::string& name) {
  if (name == "builtin") {
    auto s = builtin_synthesizer::create();
    if (!s) return tl::unexpected(s.error());
    return std::unique_ptr<synthesizer>(std::move(*s));
  }
  return make_error(errc::invalid_input, "unknown synthesizer '" + name + "' (this build has: builtin)");
}

}  // namespace kevolve::synth
