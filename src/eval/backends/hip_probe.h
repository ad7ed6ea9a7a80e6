// The hip backend's hardware profile. On a node with an AMD GPU it is
// measured by kevolve-hip-probe (device-to-device copy bandwidth, FP32 peak
// from CUs and clock; UNVERIFIED: no AMD GPU was available) and cached per
// device; elsewhere it is the MI300X datasheet (config/hardware/mi300x.yaml),
// on which compile_only verdicts place nothing (they are never timed).
#pragma once

#include "common/error.h"
#include "spec/hardware_profile.h"

namespace kevolve::eval {

expected<spec::hardware_profile> hip_hardware_profile(bool remeasure);

}  // namespace kevolve::eval
