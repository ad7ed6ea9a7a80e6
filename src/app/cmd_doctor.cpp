#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <thread>

#include <nlohmann/json.hpp>

#include "app/commands.h"
#include "common/paths.h"
#include "common/subprocess.h"
#include "eval/backends/backend.h"
#include "eval/backends/cpu_probe.h"
#include "eval/backends/cuda_probe.h"
#include "eval/backends/hip_backend.h"

namespace kevolve::app {
namespace {

// First line of a tool's version output, or "" when it is not there.
std::string probe_tool(const std::vector<std::string>& argv) {
  subprocess_options o;
  o.timeout = std::chrono::seconds(10);
  auto r = run_subprocess(argv, o);
  if (!r || r->exit_code == 127 || r->timed_out) return {};
  std::string first = r->output.substr(0, r->output.find('\n'));
  if (first.empty() || first.find("exec failed") != std::string::npos) return {};
  return first;
}

std::string find_line(const std::string& text, const std::string& needle) {
  size_t pos = text.find(needle);
  if (pos == std::string::npos) return {};
  size_t start = text.rfind('\n', pos);
  start = start == std::string::npos ? 0 : start + 1;
  return text.substr(start, text.find('\n', pos) - start);
}

// ROCm/hipcc, the offload archs the compiler accepts (asked, never assumed),
// /dev/kfd and hipGetDeviceCount (through kevolve-hip-probe).
nlohmann::json hip_section() {
  nlohmann::json h;
  h["hipcc"] = eval::hipcc_path();
  eval::hip_compiler c(cache_root() / "compile" / "hip", std::chrono::seconds(60), {"gfx90a"});
  auto tool = c.toolchain();
  h["toolchain"] = tool ? tool->substr(0, tool->find(" (")) : "";  // "hipcc clang 15.0.6"
  if (!tool) h["error"] = tool.error().message;
  if (tool) {
    for (const char* a : {"gfx90a", "gfx940", "gfx942"}) h["accepts"][a] = eval::hipcc_knows_arch(a);
    h["offload_archs"] = eval::hip_offload_archs();
  }
  h["kfd"] = std::filesystem::exists("/dev/kfd");
  const auto probe = eval::hip_probe_executable();
  h["devices"] = std::filesystem::exists(probe) ? probe_tool({probe.string(), "--count"}) : "kevolve-hip-probe not built";
  h["runs_kernels"] = eval::hip_cannot_run_here().empty();
  h["verdicts"] = eval::hip_cannot_run_here().empty() ? "full protocol (unverified on AMD hardware)"
                                                      : "compile_only: " + eval::hip_cannot_run_here();
  return h;
}

}  // namespace

int run_doctor(const cli::doctor_command& cmd) {
  const int threads = cmd.threads > 0 ? cmd.threads : int(std::max(1u, std::thread::hardware_concurrency()));
  nlohmann::json j;
  j["kevolve"] = kevolve_version();
  j["data_root"] = data_root().string();
  j["cache_root"] = cache_root().string();
  j["worker"] = worker_executable().string();
  j["threads"] = threads;
  j["tools"]["g++"] = probe_tool({"g++", "--version"});
  j["tools"]["nvcc"] = find_line(probe_tool({"sh", "-c", "nvcc --version 2>&1 | tail -2 | head -1"}), "release");
  if (j["tools"]["nvcc"].get<std::string>().empty() && std::filesystem::exists("/usr/local/cuda/bin/nvcc"))
    j["tools"]["nvcc"] = probe_tool({"sh", "-c", "/usr/local/cuda/bin/nvcc --version | grep release"});
  j["hip"] = hip_section();
  j["tools"]["hipcc"] = j["hip"]["toolchain"];
  j["tools"]["mpirun"] = probe_tool({"mpirun", "--version"});
  j["tools"]["slurm"] = probe_tool({"sinfo", "--version"});
  j["tools"]["python3-torch"] = probe_tool({"/usr/bin/python3", "-c", "import torch; print('torch', torch.__version__)"});
  j["gpus"]["nvidia"] = probe_tool({"nvidia-smi", "-L"});
  j["gpus"]["amd"] = j["hip"]["runs_kernels"].get<bool>() ? j["hip"]["devices"].get<std::string>() : "";
  j["libraries"]["openblas"] = std::filesystem::exists("/usr/include/x86_64-linux-gnu/cblas.h");
  j["libraries"]["onednn"] = std::filesystem::exists("/usr/include/dnnl.h");

  auto hw = eval::cpu_hardware_profile(threads, cmd.remeasure);
  if (!hw) return report_error(hw.error());
  j["cpu"] = {{"profile", hw->name},        {"model", hw->model},
              {"peak_bandwidth_gbs", hw->peak_bandwidth_gbs}, {"cache_bandwidth_gbs", hw->cache_bandwidth_gbs},
              {"peak_gflops_fp32", hw->peak_gflops_fp32},
              {"measured_at", hw->measured_at}, {"cached_in", eval::cpu_profile_cache_path(threads)}};
  // On a GPU node: the copy bandwidth and cuBLAS bf16 rate, measured once and cached.
  expected<spec::hardware_profile> gpu = make_error(errc::not_found, "no GPU");
  if (!j["gpus"]["nvidia"].get<std::string>().empty()) {
    gpu = eval::cuda_hardware_profile(cmd.remeasure);
    if (gpu) {
      j["cuda"] = {{"profile", gpu->name}, {"model", gpu->model}, {"peak_bandwidth_gbs", gpu->peak_bandwidth_gbs},
                   {"peak_gflops_fp32", gpu->peak_gflops_fp32}, {"peak_gflops_bf16_gemm", gpu->peak_gflops_matrix},
                   {"measured_at", gpu->measured_at}};
    } else {
      j["cuda"] = {{"error", gpu.error().message}};
    }
  }
  // Every backend of the registry: whether this node can evaluate it, and
  // whether it only compiles here.
  std::vector<std::string> backends;
  for (const eval::backend_descriptor* d : eval::registered_backends()) {
    nlohmann::json& b = j["backend"][d->name];
    b["language"] = d->language;
    b["hardware"] = eval::hardware_tag_of(d->name);
    if (auto ok = eval::backend_usable(*d); !ok) {
      b["usable"] = false;
      b["why_not"] = ok.error().message;
      continue;
    }
    b["usable"] = true;
    auto be = eval::make_backend(d->name, std::chrono::seconds(60));
    const std::string cannot = be ? (*be)->cannot_run_here() : be.error().message;
    if (!cannot.empty()) b["compile_only"] = cannot;
    backends.push_back(d->name + (cannot.empty() ? "" : " (compile_only)") + (d->traits.verify_only ? " (verify only)" : ""));
  }
  j["backends"] = backends;

  if (cmd.json) {
    std::printf("%s\n", j.dump(2).c_str());
    return exit_ok;
  }
  auto show = [](const char* what, const std::string& v) { std::printf("  %-14s %s\n", what, v.empty() ? "not found" : v.c_str()); };
  std::printf("kevolve %s\n  data           %s\n  cache          %s\n", kevolve_version(), data_root().c_str(), cache_root().c_str());
  std::printf("cpu\n  model          %s\n  profile        %s, %d threads\n  bandwidth      %.1f GB/s (triad, measured %s)\n"
              "  cache reads    %.1f GB/s (per-thread 256 KiB buffers: the floor of shapes the caches hold)\n"
              "  fp32 peak      %.1f GFLOP/s (FMA loop)\n",
              hw->model.c_str(), hw->name.c_str(), threads, hw->peak_bandwidth_gbs, hw->measured_at.c_str(),
              hw->cache_bandwidth_gbs, hw->peak_gflops_fp32);
  std::printf("tools\n");
  for (const char* t : {"g++", "nvcc", "hipcc", "mpirun", "slurm", "python3-torch"}) show(t, j["tools"][t].get<std::string>());
  std::printf("gpus\n");
  show("nvidia", j["gpus"]["nvidia"].get<std::string>());
  show("amd", j["gpus"]["amd"].get<std::string>());
  std::printf("baseline libraries\n  openblas       %s\n  onednn         %s\n", j["libraries"]["openblas"].get<bool>() ? "yes" : "no",
              j["libraries"]["onednn"].get<bool>() ? "yes" : "no");
  if (gpu)
    std::printf("cuda\n  model          %s\n  profile        %s\n  bandwidth      %.1f GB/s (device-to-device copy, measured %s)\n"
                "  bf16 GEMM      %.1f GFLOP/s (cuBLAS)\n  fp32 peak      %.1f GFLOP/s (SMs x clock)\n",
                gpu->model.c_str(), gpu->name.c_str(), gpu->peak_bandwidth_gbs, gpu->measured_at.c_str(),
                gpu->peak_gflops_matrix, gpu->peak_gflops_fp32);
  else if (j.contains("cuda"))
    std::printf("cuda\n  not usable     %s\n", gpu.error().message.c_str());
  {
    const auto& h = j["hip"];
    std::string archs, accepts;
    if (h.contains("offload_archs"))
      for (const auto& a : h["offload_archs"]) archs += (archs.empty() ? "" : ", ") + a.get<std::string>();
    if (h.contains("accepts"))
      for (const auto& [a, ok] : h["accepts"].items()) accepts += (accepts.empty() ? "" : ", ") + a + (ok.get<bool>() ? " yes" : " no");
    std::printf("hip\n");
    show("hipcc", h["toolchain"].get<std::string>());
    show("accepts", accepts);
    show("offload archs", archs);
    show("/dev/kfd", h["kfd"].get<bool>() ? "present" : "");
    show("devices", h["devices"].get<std::string>());
    show("verdicts", h["verdicts"].get<std::string>());
  }
  std::printf("backends\n");
  for (const eval::backend_descriptor* d : eval::registered_backends()) {
    const auto& b = j["backend"][d->name];
    show(d->name.c_str(), !b["usable"].get<bool>()  ? "not usable: " + b["why_not"].get<std::string>()
                          : b.contains("compile_only") ? "compile_only: " + b["compile_only"].get<std::string>()
                                                       : d->language + ", " + eval::hardware_tag_of(d->name));
  }
  std::string list;
  for (const auto& b : backends) list += (list.empty() ? "" : ", ") + b;
  std::printf("backends this build can evaluate: %s\n", list.c_str());
  return exit_ok;
}

}  // namespace kevolve::app
