// A node's worst timed shape (the lowest roofline fraction among the shapes
// it was timed at, holdouts excluded): what the synthesizers are shown of its
// diagnostics, as the bottleneck, the roofline fraction and the hardware
// counters of that one shape. Used when a request is built (scheduler, also
// on --resume from the store) and for skill-note evidence.
#pragma once

#include <algorithm>

#include "store/sweep_record.h"
#include "synth/synthesizer.h"

namespace kevolve::sweep {

// Whether `m` is a timed shape worse than `worst` (nullptr: none yet).
inline bool worse_timed_shape(const store::shape_measurement& m, const store::shape_measurement* worst) {
  return !m.holdout && (!worst || m.roofline_fraction < worst->roofline_fraction);
}

// The context item's diagnostics from its node's worst timed shape.
inline void describe_worst_shape(synth::context_item& c, const store::shape_measurement& worst) {
  c.roofline_fraction = std::max(0.0, worst.roofline_fraction);
  c.bottleneck = worst.bottleneck;
  c.metrics = worst.metrics;
}

}  // namespace kevolve::sweep
