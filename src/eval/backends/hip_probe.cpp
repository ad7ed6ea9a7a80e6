#include "eval/backends/hip_probe.h"

#include <cstdlib>
#include <sstream>

#include "common/hash.h"
#include "common/log.h"
#include "common/paths.h"
#include "common/subprocess.h"
#include "eval/backends/hip_backend.h"

namespace kevolve::eval {
namespace fs = std::filesystem;

expected<spec::hardware_profile> hip_hardware_profile(bool remeasure) {
  if (!hip_cannot_run_here().empty()) {
    auto hw = spec::load_hardware_profile(data_root() / "config" / "hardware" / "mi300x.yaml");
    if (hw) hw->model += "; " + hip_cannot_run_here() + ": compile_only";
    return hw;
  }
  const fs::path exe = hip_probe_executable();
  auto out = run_subprocess({exe.string()}, timeout_options(std::chrono::seconds(180)));
  if (!out) return make_error(errc::toolchain_error, "cannot run " + exe.string() + ": " + out.error().message);
  if (!out->ok()) return make_error(errc::toolchain_error, exe.string() + " failed: " + out->output);
  const std::string fp = content_hash({out->output.substr(0, out->output.find("copy_gbs"))}).substr(0, 16);
  const fs::path cached = cache_root() / "hardware" / ("hip-" + fp + ".yaml");
  if (!remeasure && fs::exists(cached))
    if (auto hw = spec::load_hardware_profile(cached); hw && hw->fingerprint == fp) return hw;
  spec::hardware_profile hw;
  std::istringstream in(out->output);
  for (std::string line; std::getline(in, line);) {
    const size_t sp = line.find(' ');
    if (sp == std::string::npos) continue;
    const std::string key = line.substr(0, sp), value = line.substr(sp + 1);
    if (key == "name") hw.model = value;
    if (key == "arch") hw.name = "hip_" + value.substr(0, value.find(':'));
    if (key == "copy_gbs") hw.peak_bandwidth_gbs = std::atof(value.c_str());
    if (key == "fp32_gflops") hw.peak_gflops_fp32 = std::atof(value.c_str());
  }
  if (hw.peak_bandwidth_gbs <= 0 || hw.peak_gflops_fp32 <= 0)
    return make_error(errc::toolchain_error, exe.string() + " printed no figures: " + out->output);
  hw.backend = "hip";
  hw.source = "measured (device-to-device copy); fp32 from CU count and clock";
  hw.fingerprint = fp;
  if (auto s = spec::save_hardware_profile(cached, hw); !s) log::warn("cannot cache hardware profile: {}", s.error().message);
  return hw;
}

}  // namespace kevolve::eval
