#include "eval/backends/cuda_probe.h"

#include <cstdlib>
#include <ctime>
#include <sstream>

#include "common/hash.h"
#include "common/log.h"
#include "common/paths.h"
#include "common/subprocess.h"

namespace kevolve::eval {
namespace fs = std::filesystem;

fs::path cuda_probe_executable() {
  if (const char* p = std::getenv("KEVOLVE_CUDA_PROBE"); p && *p) return p;
  return worker_executable().parent_path() / "kevolve-cuda-probe";
}

expected<spec::hardware_profile> cuda_hardware_profile(bool remeasure) {
  auto smi = run_subprocess({"nvidia-smi", "--query-gpu=name,uuid,driver_version", "--format=csv,noheader", "-i", "0"},
                            timeout_options(std::chrono::seconds(20)));
  if (!smi || !smi->ok()) {
    std::string why = !smi ? "nvidia-smi cannot run: " + smi.error().message
                      : smi->exit_code == 127 ? std::string("nvidia-smi is not installed (no NVIDIA driver)")
                                              : "nvidia-smi failed: " + smi->output;
    while (!why.empty() && (why.back() == '\n' || why.back() == ' ')) why.pop_back();
    return make_error(errc::toolchain_error, "no CUDA device: " + why);
  }
  const std::string fp = content_hash({smi->output}).substr(0, 16);
  const fs::path cached = cache_root() / "hardware" / ("cuda-" + fp + ".yaml");
  if (!remeasure && fs::exists(cached)) {
    auto hw = spec::load_hardware_profile(cached);
    if (hw && hw->fingerprint == fp) return hw;
    log::warn("ignoring hardware profile {}: {}", cached.string(), hw ? "made for another GPU" : hw.error().message);
  }
  const fs::path exe = cuda_probe_executable();
  auto out = run_subprocess({exe.string()}, timeout_options(std::chrono::seconds(180)));
  if (!out) return make_error(errc::toolchain_error, "cannot run " + exe.string() + ": " + out.error().message);
  if (out->exit_code == 77) return make_error(errc::toolchain_error, "no CUDA device: " + out->output);
  if (!out->ok()) return make_error(errc::toolchain_error, exe.string() + " failed: " + out->output);
  spec::hardware_profile hw;
  std::istringstream in(out->output);
  std::string line;
  while (std::getline(in, line)) {
    const size_t sp = line.find(' ');
    if (sp == std::string::npos) continue;
    const std::string key = line.substr(0, sp), value = line.substr(sp + 1);
    if (key == "name") hw.model = value;
    if (key == "compute_capability") hw.name = "cuda_sm" + value;
    if (key == "copy_gbs") hw.peak_bandwidth_gbs = std::atof(value.c_str());
    if (key == "fp32_gflops") hw.peak_gflops_fp32 = std::atof(value.c_str());
    if (key == "bf16_gemm_gflops") hw.peak_gflops_matrix = std::atof(value.c_str());
  }
  if (hw.peak_bandwidth_gbs <= 0 || hw.peak_gflops_fp32 <= 0)
    return make_error(errc::toolchain_error, exe.string() + " printed no figures: " + out->output);
  hw.backend = "cuda";
  hw.source = "measured (copy, cuBLAS bf16 GEMM); fp32 from SM count and clock";
  hw.threads = 1;
  hw.fingerprint = fp;
  const std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  hw.measured_at = buf;
  if (auto s = spec::save_hardware_profile(cached, hw); !s) log::warn("cannot cache hardware profile: {}", s.error().message);
  return hw;
}

}  // namespace kevolve::eval
