#include "eval/backends/hip_backend.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <regex>
#include <set>
#include <sstream>

#include "common/fs.h"
#include "common/hash.h"
#include "common/paths.h"
#include "common/subprocess.h"
#include "eval/backends/cpu_backend.h"
#include "eval/backends/gpu_common.h"

namespace kevolve::eval {
namespace fs = std::filesystem;

namespace {

// HIP runtime functions a candidate may call: launching, error queries,
// attributes and occupancy, and stream-ordered memset of its own buffers.
const std::set<std::string> kAllowedRuntime = {
    "__hipRegisterFatBinary", "__hipUnregisterFatBinary", "__hipRegisterFunction", "__hipRegisterVar",
    "__hipPushCallConfiguration", "__hipPopCallConfiguration", "hipLaunchKernel", "hipGetLastError",
    "hipPeekAtLastError", "hipGetErrorString", "hipGetErrorName", "hipFuncSetAttribute", "hipFuncGetAttributes",
    "hipFuncSetCacheConfig", "hipGetDevice", "hipDeviceGetAttribute", "hipGetDeviceProperties",
    "hipGetDevicePropertiesR0600", "hipOccupancyMaxActiveBlocksPerMultiprocessor",
    "hipOccupancyMaxActiveBlocksPerMultiprocessorWithFlags", "hipOccupancyMaxPotentialBlockSize",
    "hipMemsetAsync", "hipMemsetD32Async", "hipMemset2DAsync"};

bool allowed_needed(const std::string& lib, const std::vector<std::string>& allowed) {
  for (const char* ok : {"libamdhip64.so", "libstdc++.so", "libgcc_s.so", "libc.so", "libm.so", "ld-linux"})
    if (lib.rfind(ok, 0) == 0) return true;
  auto allows = [&](const char* name) { return std::find(allowed.begin(), allowed.end(), name) != allowed.end(); };
  if (lib.rfind("librocblas.so", 0) == 0 && allows("rocblas")) return true;
  if (lib.rfind("libMIOpen.so", 0) == 0 && allows("miopen")) return true;
  return false;
}

const std::vector<gpu::source_rule>& hip_rules() {
  static const std::vector<gpu::source_rule> r = {
      {"device synchronization",
       std::regex(R"(\b(hipDeviceSynchronize|hipStreamSynchronize|hipEventSynchronize|hipDeviceReset|hipStreamWaitEvent|hipStreamQuery)\b)"),
       nullptr},
      {"stream other than the given one",
       std::regex(R"(\b(hipStreamCreate\w*|hipStreamDestroy|hipStreamPerThread|hipStreamNonBlocking|hipStreamDefault)\b)"),
       nullptr},
      {"memory allocation",
       std::regex(R"(\b(hipMalloc\w*|hipFree\w*|hipHostMalloc|hipHostRegister|hipExtMallocWithFlags|malloc|calloc|realloc|free)\s*\()"),
       nullptr},
      {"memory copy", std::regex(R"(\b(hipMemcpy\w*|hipMemPrefetch\w*|hipMemAdvise)\b)"), nullptr},
      {"timer", std::regex(R"(\b(hipEvent\w*)\b)"), nullptr},
      {"graph capture", std::regex(R"(\b(hipGraph\w*|hipStreamBeginCapture|hipStreamEndCapture)\b)"), nullptr},
      {"module or driver API", std::regex(R"(\b(hipModule\w*|hipCtx\w*|hipDrv\w*|hiprtc\w*)\b)"), nullptr},
      {"device or context control",
       std::regex(R"(\b(hipSetDevice\w*|hipDeviceSetCacheConfig|hipDeviceSetSharedMemConfig|hipIpc\w*|hipDeviceSetLimit)\b)"),
       nullptr},
      {"mutable device global", std::regex(R"(\b__device__\s+(?!const\b|constexpr\b)[^;(){}=]*(=[^;(){}]*)?;)"), nullptr},
      {"vendor library header", std::regex(R"(#\s*include\s*[<"](rocblas|hipblas)[^>"]*[>"])"), "rocblas"},
      {"vendor library header", std::regex(R"(#\s*include\s*[<"](miopen)[^>"]*[>"])"), "miopen"},
      {"vendor library header",
       std::regex(R"(#\s*include\s*[<"](hipcub|rocprim|thrust|rocthrust|rocfft|hipfft|rocrand|hiprand|rocsparse|hipsparse|rccl|composable_kernel|ck|torch|ATen|c10)[/.][^>"]*[>"])"),
       nullptr},
      {"vendor library call", std::regex(R"(\b(hipcub::\w+|rocprim::\w+|thrust::\w+|ck::\w+))"), nullptr},
  };
  return r;
}

// Host objects hipcc emits for registration and launch stubs.
bool hipcc_generated(const std::string& name, const std::vector<gpu_kernel_resources>& kernels) {
  if (name.rfind("__hip_", 0) == 0 || name == "completed.0") return true;
  return std::any_of(kernels.begin(), kernels.end(), [&](const auto& k) { return k.name == name; });
}

int remark_value(const std::string& line, const char* key) {
  const size_t p = line.find(key);
  if (p == std::string::npos) return -1;
  return int(std::strtol(line.c_str() + p + std::strlen(key), nullptr, 10));
}

}  // namespace

std::string hipcc_path() { return gpu::find_tool("KEVOLVE_HIPCC", "hipcc", "/usr/bin/hipcc"); }

bool hipcc_knows_arch(const std::string& arch) {
  auto r = run_subprocess({hipcc_path(), "--offload-arch=" + arch, "-x", "hip", "-fsyntax-only", "/dev/null"},
                          timeout_options(std::chrono::seconds(30)));
  return r && r->ok();
}

std::vector<std::string> hip_offload_archs() {
  std::vector<std::string> out;
  if (const char* e = std::getenv("KEVOLVE_HIP_ARCHS"); e && *e) {
    std::string list = e;
    std::replace(list.begin(), list.end(), ';', ',');
    std::istringstream in(list);
    for (std::string a; std::getline(in, a, ',');)
      if (!gpu::trim(a).empty()) out.push_back(gpu::trim(a));
  } else {
    out = {"gfx90a", "gfx940"};
    static const bool gfx942 = hipcc_knows_arch("gfx942");  // ROCm >= 5.7; Debian 12's 5.2 does not know it
    if (gfx942) out.push_back("gfx942");
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::vector<gpu_kernel_resources> parse_hip_resource_remarks(const std::string& text,
                                                             const std::vector<std::string>& archs) {
  std::vector<gpu_kernel_resources> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.find("kernel-resource-usage") == std::string::npos) continue;
    if (const size_t p = line.find("Function Name: "); p != std::string::npos) {
      out.push_back({});
      out.back().name = gpu::trim(line.substr(p + 15, line.find(" [-Rpass") - p - 15));
      continue;
    }
    if (out.empty()) continue;
    auto& k = out.back();
    auto set = [&](const char* key, int& field) {
      if (const int v = remark_value(line, key); v >= 0) field = v;
    };
    set("SGPRs Spill: ", k.sgpr_spills);
    set("VGPRs Spill: ", k.vgpr_spills);
    if (line.find("Spill") == std::string::npos) {
      set("SGPRs: ", k.sgprs);
      set("VGPRs: ", k.registers);
    }
    set("AGPRs: ", k.agprs);
    set("ScratchSize [bytes/lane]: ", k.stack_bytes);
    set("Occupancy [waves/SIMD]: ", k.occupancy);
    set("LDS Size [bytes/block]: ", k.shared_bytes);
  }
  // One block per kernel and arch, archs in sorted order.
  if (!archs.empty() && out.size() % archs.size() == 0) {
    const size_t per = out.size() / archs.size();
    for (size_t i = 0; i < out.size(); ++i) out[i].target = archs[i / per];
  }
  return out;
}

std::string hip_resource_failure(const std::string& diagnostics, const std::vector<gpu_kernel_resources>& kernels) {
  std::smatch m;
  static const std::regex lds(R"(local memory \((\d+)\) exceeds limit \((\d+)\) in function '([^']+)')");
  if (std::regex_search(diagnostics, m, lds))
    return "exceeds the LDS limit: kernel " + m[3].str() + " needs " + m[1].str() + " bytes of LDS per workgroup, the "
           "limit is " + m[2].str();
  for (const auto& k : kernels) {
    if (k.shared_bytes > 65536)
      return "exceeds the LDS limit on " + k.target + ": kernel " + k.name + " needs " + std::to_string(k.shared_bytes) +
             " bytes of LDS per workgroup, the limit is 65536";
    if (k.vgpr_spills > 0)
      return "exceeds the VGPR limit on " + k.target + ": kernel " + k.name + " spilled " + std::to_string(k.vgpr_spills) +
             " VGPRs to scratch (VGPRs " + std::to_string(k.registers) + ", AGPRs " + std::to_string(k.agprs) +
             ", scratch " + std::to_string(k.stack_bytes) + " bytes/lane)";
  }
  return {};
}

fs::path hip_worker_executable() {
  if (const char* w = std::getenv("KEVOLVE_HIP_WORKER"); w && *w) return w;
  return worker_executable().parent_path() / "kevolve-hip-worker";
}

fs::path hip_probe_executable() {
  if (const char* w = std::getenv("KEVOLVE_HIP_PROBE"); w && *w) return w;
  return worker_executable().parent_path() / "kevolve-hip-probe";
}

const std::string& hip_cannot_run_here() {
  static const std::string why = []() -> std::string {
    if (!fs::exists("/dev/kfd")) return "no AMD GPU on this node (no /dev/kfd)";
    const fs::path probe = hip_probe_executable();
    if (::access(probe.c_str(), X_OK) != 0) return "kevolve-hip-probe was not built (no HIP runtime at build time)";
    auto r = run_subprocess({probe.string(), "--count"}, timeout_options(std::chrono::seconds(60)));
    if (!r || !r->ok()) return "no AMD GPU: " + (r ? gpu::trim(r->output) : r.error().message);
    if (::access(hip_worker_executable().c_str(), X_OK) != 0) return "kevolve-hip-worker was not built";
    return "";
  }();
  return why;
}

hip_compiler::hip_compiler(fs::path cache_dir, std::chrono::seconds timeout, std::vector<std::string> archs)
    : cache_(std::move(cache_dir), timeout), archs_(archs.empty() ? hip_offload_archs() : std::move(archs)),
      hipcc_(hipcc_path()) {
  std::sort(archs_.begin(), archs_.end());
}

std::vector<std::string> hip_compiler::flags(const std::vector<std::string>& libraries) const {
  // hipcc injects -std=c++11 -O3: later flags win. -Rpass-analysis gives the resources.
  std::vector<std::string> f = {"-std=c++17", "-O3", "-fPIC", "-shared", "-Rpass-analysis=kernel-resource-usage",
                                "-I" + (data_root() / "src" / "abi").string()};
  for (const auto& a : archs_) f.push_back("--offload-arch=" + a);
  for (const auto& l : libraries) {
    if (l == "rocblas") f.push_back("-lrocblas");
    if (l == "miopen") f.push_back("-lMIOpen");
  }
  return f;
}

expected<std::string> hip_compiler::toolchain() {
  if (toolchain_id_.empty()) {
    // --offload-arch keeps hipcc from probing for a GPU (a traceback without one).
    auto v = run_subprocess({hipcc_, "--offload-arch=" + archs_.front(), "--version"}, timeout_options(std::chrono::seconds(20)));
    if (!v || !v->ok())
      return make_error(errc::toolchain_error, "cannot run " + hipcc_ + " (install hipcc, set KEVOLVE_HIPCC or put it on PATH)" +
                                                   (v ? ": " + gpu::trim(v->output) : ""));
    std::string ver = "unknown";
    std::smatch m;
    if (std::regex_search(v->output, m, std::regex(R"(clang version (\S+))"))) ver = m[1].str();
    std::string archs;
    for (const auto& a : archs_) archs += (archs.empty() ? "" : ",") + a;
    auto abi = read_file(data_root() / "src" / "abi" / "kevolve" / "abi.h");
    toolchain_id_ = "hipcc clang " + ver + " (" + content_hash({v->output}).substr(0, 12) + ") | " + archs + " | abi " +
                    content_hash({abi ? *abi : ""}).substr(0, 12);
  }
  return toolchain_id_;
}

expected<compiled_kernel> hip_compiler::compile(const std::string& source, const std::vector<std::string>& libraries,
                                                const std::string& display_name) {
  auto tool = toolchain();
  if (!tool) return tl::unexpected(tool.error());
  const bool cuda_source = display_name.size() > 3 && display_name.substr(display_name.size() - 3) == ".cu";
  compile_recipe r;
  r.compiler = hipcc_;
  r.flags = flags(libraries);
  r.toolchain = *tool;
  r.key_extra = {cuda_source ? "cuda_on_hip" : ""};
  // Trusted CUDA baselines (.cu) compile for AMD through the CUDA-runtime-on-HIP header.
  if (cuda_source) r.leading = {"-I" + (data_root() / "src" / "abi" / "cuda_on_hip").string()};
  r.scratch_args = [](const compile_scratch& s) {
    return std::vector<std::string>{"-Wl,--version-script=" + s.exports.string(), "-Wl,--no-undefined"};
  };
  r.scratch_prefix = "kevolve-hipcc-";
  r.source_file = "kernel.hip";
  r.max_output_bytes = 256 * 1024;  // one remark block per kernel and arch
  for (const auto& a : archs_) r.target += (r.target.empty() ? "" : ",") + a;
  r.parse_diagnostics = [this](compile_report& report) {
    report.kernels = parse_hip_resource_remarks(report.diagnostics, archs_);
  };
  r.refuse = [](const compile_report& report) { return hip_resource_failure(report.diagnostics, report.kernels); };
  return cache_.compile(source, r, display_name);
}

std::vector<policy_violation> scan_hip_source(const std::string& source, const std::vector<std::string>& allowed) {
  std::vector<policy_violation> out;
  // Inline assembly is how MFMA and DPP are reached beyond the builtins; the
  // host side is still confined by the worker's sandbox and the import check.
  for (auto& v : scan_source(source, allowed))
    if (v.rule != "inline assembly") out.push_back(std::move(v));
  const std::string code = strip_comments_and_strings(source);
  gpu::apply_rules(code, hip_rules(), allowed, out);
  gpu::scan_chevron_launches(code, out);
  gpu::scan_call_launches(code, "hipLaunchKernelGGL", 4, out);
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.line < b.line; });
  return out;
}

abi_check check_hip_library(const elf_report& elf, const std::vector<gpu_kernel_resources>& kernels,
                            const std::vector<std::string>& allowed) {
  elf_report host = elf;
  host.mutable_statics.clear();
  for (const auto& s : elf.mutable_statics)
    if (!hipcc_generated(s, kernels)) host.mutable_statics.push_back(s);
  if (host.init_functions > 0) --host.init_functions;  // hipcc's code-object registration
  abi_check c = check_candidate_library(host);
  if (c.result != status::ok) return c;
  std::string bad;
  for (const auto& lib : elf.needed)
    if (!allowed_needed(lib, allowed)) bad += (bad.empty() ? "" : ", ") + lib;
  if (!bad.empty()) {
    c.result = status::suspicious;
    c.reason = "links libraries the operator does not allow (library fallback): " + bad;
    return c;
  }
  for (const auto& i : elf.imports) {
    const std::string base = i.substr(0, i.find('@'));
    if (base.rfind("rocblas", 0) == 0 && allowed_needed("librocblas.so", allowed)) continue;
    if (base.rfind("miopen", 0) == 0 && allowed_needed("libMIOpen.so", allowed)) continue;
    const bool runtime = base.rfind("hip", 0) == 0 || base.rfind("__hip", 0) == 0;
    if (runtime && !kAllowedRuntime.count(base)) bad += (bad.empty() ? "" : ", ") + base;
  }
  if (!bad.empty()) {
    c.result = status::suspicious;
    c.reason = "calls HIP functions a kernel may not use (synchronization, streams, allocation, copies, events or "
               "libraries): " + bad;
  }
  return c;
}

const std::string& hip_backend::toolchain_id() {
  if (id_.empty()) {
    auto t = compiler_.toolchain();
    id_ = t ? *t : "hipcc unavailable";
  }
  return id_;
}

expected<abi_check> hip_backend::check_compiled(const compiled_kernel& k, const std::vector<std::string>& allowed) const {
  auto elf = inspect_elf(k.library);
  if (!elf) return tl::unexpected(elf.error());
  return check_hip_library(*elf, k.report.kernels, allowed);
}

}  // namespace kevolve::eval
