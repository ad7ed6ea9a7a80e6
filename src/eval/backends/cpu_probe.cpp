#include "eval/backends/cpu_probe.h"

#include <algorithm>
#include <chrono>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/fs.h"
#include "common/hash.h"
#include "common/log.h"
#include "common/paths.h"
#include "common/subprocess.h"

namespace kevolve::eval {
namespace fs = std::filesystem;

namespace {

struct cpu_facts {
  std::string model;
  std::string flags;
};

cpu_facts read_cpuinfo() {
  std::ifstream in("/proc/cpuinfo");
  cpu_facts f;
  std::string line;
  while (std::getline(in, line)) {
    if (f.model.empty() && line.rfind("model name", 0) == 0) f.model = line.substr(line.find(':') + 2);
    if (f.flags.empty() && line.rfind("flags", 0) == 0) f.flags = " " + line.substr(line.find(':') + 2) + " ";
  }
  return f;
}

std::string fingerprint(const cpu_facts& f, int threads) {
  // The probe's version: a profile an older probe measured is measured again.
  return content_hash({f.model, f.flags, std::to_string(threads), "probe 2 (cache_read)"}).substr(0, 16);
}

std::string now_utc() {
  const std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

}  // namespace

std::string cpu_profile_cache_path(int threads) {
  return (cache_root() / "hardware" / ("cpu-" + fingerprint(read_cpuinfo(), threads) + ".yaml")).string();
}

expected<spec::hardware_profile> cpu_hardware_profile(int threads, bool remeasure) {
  const cpu_facts facts = read_cpuinfo();
  const std::string fp = fingerprint(facts, threads);
  const fs::path cached = cpu_profile_cache_path(threads);
  if (!remeasure && fs::exists(cached)) {
    auto hw = spec::load_hardware_profile(cached);
    if (hw && hw->fingerprint == fp) return hw;
    log::warn("ignoring hardware profile {}: {}", cached.string(), hw ? "made for another machine" : hw.error().message);
  }
  auto dir = temp_dir::create("kevolve-probe-");
  if (!dir) return tl::unexpected(dir.error());
  const fs::path exe = dir->path() / "cpu_roofline";
  const fs::path src = data_root() / "data" / "probes" / "cpu_roofline.cpp";
  auto build = run_subprocess({"g++", "-std=gnu++17", "-O3", "-march=native", "-fopenmp", src.string(), "-o", exe.string()},
                              timeout_options(std::chrono::seconds(120)));
  if (!build || !build->ok())
    return make_error(errc::toolchain_error, "cannot build the roofline probe " + src.string() + ": " +
                                                 (build ? build->output : build.error().message));
  subprocess_options run;
  run.timeout = std::chrono::seconds(120);
  run.env = std::vector<std::string>{"OMP_NUM_THREADS=" + std::to_string(threads), "OMP_PROC_BIND=false", "PATH=/usr/bin:/bin"};
  auto out = run_subprocess({exe.string(), "256"}, run);
  if (!out || !out->ok())
    return make_error(errc::toolchain_error, "the roofline probe failed: " + (out ? out->output : out.error().message));
  std::istringstream in(out->output);
  std::string key;
  double value = 0, triad = 0, triad_nt = 0, cache = 0, fma = 0;
  while (in >> key >> value) {
    if (key == "triad_gbs") triad = value;
    if (key == "triad_nt_gbs") triad_nt = value;
    if (key == "fma_gflops") fma = value;
    if (key == "cache_read_gbs") cache = value;
  }
  if (triad <= 0 || fma <= 0) return make_error(errc::toolchain_error, "the roofline probe printed no figures: " + out->output);
  spec::hardware_profile hw;
  const bool avx512 = facts.flags.find(" avx512f ") != std::string::npos;
  const bool avx2 = facts.flags.find(" avx2 ") != std::string::npos;
  hw.name = avx512 ? "x86_avx512" : avx2 ? "x86_avx2" : "cpu_generic";
  hw.backend = "cpu";
  hw.model = facts.model;
  hw.source = "measured";
  hw.threads = threads;
  hw.peak_bandwidth_gbs = std::max(triad, triad_nt);
  hw.peak_gflops_fp32 = fma;
  hw.cache_bandwidth_gbs = cache;
  hw.measured_at = now_utc();
  hw.fingerprint = fp;
  if (auto s = spec::save_hardware_profile(cached, hw); !s) log::warn("cannot cache hardware profile: {}", s.error().message);
  return hw;
}

}  // namespace kevolve::eval
