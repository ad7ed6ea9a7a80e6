// What the synthesizers are shown of a node's timed shapes (holdouts are
// never timed): the bottleneck and roofline fraction of its worst timed shape
// (the lowest roofline fraction), and the hardware counters of its worst
// profiled timed shape. The two can differ: the cuda evaluator profiles only
// the largest timed shape with Nsight Compute. Used when a request is built
// (scheduler, also on --resume from the store) and for skill notes.
#pragma once

#include <algorithm>
#include <map>
#include <string>

#include "store/sweep_record.h"
#include "synth/synthesizer.h"

namespace kevolve::sweep {

class node_diagnosis {
 public:
  // Folds in one of the node's measurements.
  void add(const store::shape_measurement& m) {
    if (m.holdout) return;
    if (!timed_ || m.roofline_fraction < roofline_fraction_) {
      timed_ = true;
      roofline_fraction_ = m.roofline_fraction;
      bottleneck_ = m.bottleneck;
    }
    if (!m.metrics.empty() && (!profiled_ || m.roofline_fraction < profiled_fraction_)) {
      profiled_ = true;
      profiled_fraction_ = m.roofline_fraction;
      metrics_ = m.metrics;
    }
  }

  bool timed() const { return timed_; }

  void describe(synth::context_item& c) const {
    if (timed_) {
      c.roofline_fraction = std::max(0.0, roofline_fraction_);
      c.bottleneck = bottleneck_;
    }
    c.metrics = metrics_;
  }

 private:
  bool timed_ = false, profiled_ = false;
  double roofline_fraction_ = 0.0, profiled_fraction_ = 0.0;
  std::string bottleneck_;
  std::map<std::string, double> metrics_;
};

}  // namespace kevolve::sweep
