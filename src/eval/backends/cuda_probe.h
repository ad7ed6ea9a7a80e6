// The cuda backend's hardware profile: measured once by kevolve-cuda-probe
// (device-to-device copy bandwidth, cuBLAS bf16 GEMM rate, FP32 rate from
// the clock) and cached under the kevolve cache directory, keyed by the GPU's
// name, UUID and driver (nvidia-smi).
#pragma once

#include <filesystem>

#include "common/error.h"
#include "spec/hardware_profile.h"

namespace kevolve::eval {

// kevolve-cuda-probe: $KEVOLVE_CUDA_PROBE, else beside this binary.
std::filesystem::path cuda_probe_executable();

// Cached profile, or a fresh measurement (a few seconds) when there is none
// or `remeasure` is set. An error when there is no GPU or no probe.
expected<spec::hardware_profile> cuda_hardware_profile(bool remeasure);

}  // namespace kevolve::eval
