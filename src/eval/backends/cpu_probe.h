// The cpu backend's hardware profile: measured once by running
// data/probes/cpu_roofline.cpp (triad bandwidth, FMA peak) and cached under
// the kevolve cache directory, keyed by CPU model, flags and thread count.
#pragma once

#include "common/error.h"
#include "spec/hardware_profile.h"

namespace kevolve::eval {

// Cached profile, or a fresh measurement (about a second) when there is none
// or `remeasure` is set.
expected<spec::hardware_profile> cpu_hardware_profile(int threads, bool remeasure);

// Where the profile for `threads` is cached.
std::string cpu_profile_cache_path(int threads);

}  // namespace kevolve::eval
