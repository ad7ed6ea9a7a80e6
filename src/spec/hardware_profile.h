// A backend's concrete target: peak bandwidth and arithmetic rate, measured
// (kevolve doctor) or from a datasheet, kept as YAML.
#pragma once

#include <filesystem>
#include <string>

#include "common/error.h"

namespace kevolve::spec {

struct hardware_profile {
  std::string name;          // e.g. "x86_avx512", "h200"
  std::string backend;       // cpu, cuda, hip, mtia_emu
  std::string model;         // CPU or device model string
  std::string source;        // "measured" or "datasheet"
  int threads = 1;           // threads the measurement used
  double peak_bandwidth_gbs = 0.0;  // best of STREAM-like triad variants
  double peak_gflops_fp32 = 0.0;    // FMA loop (GPUs: SMs x FP32 lanes x 2 x clock)
  double peak_gflops_matrix = 0.0;  // GPUs: a measured cuBLAS bf16 GEMM; 0 when not measured
  // CPUs: reads of a per-thread buffer that stays in the L2; 0 when not
  // measured. The floor of a shape whose timed data may stay in the caches.
  double cache_bandwidth_gbs = 0.0;
  std::string measured_at;          // ISO 8601 UTC
  std::string fingerprint;          // what the cache entry is valid for

  // Arithmetic intensity (flop/byte) where the roofline turns.
  double ridge_point() const { return peak_gflops_fp32 / peak_bandwidth_gbs; }
};

expected<hardware_profile> load_hardware_profile(const std::filesystem::path& file);
expected<void> save_hardware_profile(const std::filesystem::path& file, const hardware_profile& hw);

}  // namespace kevolve::spec
