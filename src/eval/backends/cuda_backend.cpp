#include "eval/backends/cuda_backend.h"

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

int to_int(const std::string& s) { return int(std::strtol(s.c_str(), nullptr, 10)); }

// CUDA runtime functions a candidate may call: launching, error queries,
// attributes and occupancy, and stream-ordered memset of its own buffers.
const std::set<std::string> kAllowedRuntime = {
    "__cudaRegisterFatBinary", "__cudaRegisterFatBinaryEnd", "__cudaUnregisterFatBinary", "__cudaRegisterFunction",
    "__cudaRegisterVar", "__cudaPushCallConfiguration", "__cudaPopCallConfiguration", "__cudaLaunchKernel",
    "__cudaLaunchKernel_ptsz", "__cudaGetKernel", "cudaLaunchKernel", "cudaLaunchKernelExC", "cudaLaunchCooperativeKernel",
    "cudaGetLastError", "cudaPeekAtLastError", "cudaGetErrorString", "cudaGetErrorName", "cudaFuncSetAttribute",
    "cudaFuncGetAttributes", "cudaFuncSetCacheConfig", "cudaGetDevice", "cudaDeviceGetAttribute",
    "cudaGetDeviceProperties", "cudaGetDeviceProperties_v2", "cudaOccupancyMaxActiveBlocksPerMultiprocessor",
    "cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags", "cudaOccupancyAvailableDynamicSMemPerBlock",
    "cudaOccupancyMaxActiveClusters",
    "cudaMemsetAsync", "cudaMemset2DAsync",
    // The one driver function: it encodes a TMA descriptor (Hopper's bulk
    // tensor copies) into memory the caller owns, and touches no device,
    // stream or allocation. Every other cu* import stays forbidden.
    "cuTensorMapEncodeTiled"};

// Libraries a candidate's shared object may need, and those an operator can allow.
bool allowed_needed(const std::string& lib, const std::vector<std::string>& allowed) {
  // libcuda: only for the allowed driver function (the import check below).
  for (const char* ok : {"libcudart.so", "libcuda.so", "libstdc++.so", "libgcc_s.so", "libc.so", "libm.so", "ld-linux"})
    if (lib.rfind(ok, 0) == 0) return true;
  auto allows = [&](const char* name) { return std::find(allowed.begin(), allowed.end(), name) != allowed.end(); };
  if ((lib.rfind("libcublas.so", 0) == 0 || lib.rfind("libcublasLt.so", 0) == 0) && allows("cublas")) return true;
  if (lib.rfind("libcudnn", 0) == 0 && allows("cudnn")) return true;
  return false;
}

// Host objects nvcc itself emits for kernel registration and launch stubs.
bool nvcc_generated(const std::string& name) {
  for (const char* part : {"__fatDeviceText", "__cudaFatCubinHandle", "__device_stub__", "__nv_", "__cudaPrelinked",
                           "completed.0", "__cudaRegister"})
    if (name.find(part) != std::string::npos) return true;
  return false;
}

const std::vector<gpu::source_rule>& cuda_rules() {
  static const std::vector<gpu::source_rule> r = {
      {"device synchronization",
       std::regex(R"(\b(cudaDeviceSynchronize|cudaStreamSynchronize|cudaEventSynchronize|cudaThreadSynchronize|cudaDeviceReset|cudaStreamWaitEvent|cudaStreamQuery)\b)"),
       nullptr},
      {"stream other than the given one",
       std::regex(R"(\b(cudaStreamCreate\w*|cudaStreamDestroy|cudaStreamPerThread|cudaStreamLegacy|cudaStreamNonBlocking|cudaStreamDefault)\b)"),
       nullptr},
      {"memory allocation",
       std::regex(R"(\b(cudaMalloc\w*|cudaFree\w*|cudaHostAlloc|cudaHostRegister|cudaMallocManaged|malloc|calloc|realloc|free)\s*\()"),
       nullptr},
      {"memory copy", std::regex(R"(\b(cudaMemcpy\w*|cudaMemPrefetch\w*)\b)"), nullptr},
      {"L2 persistence control",
       std::regex(R"(\b(cudaDeviceSetLimit|cudaCtxResetPersistingL2Cache|cudaStreamSetAttribute|cudaLimitPersistingL2CacheSize|accessPolicyWindow|cudaAccessProperty\w*)\b)"),
       nullptr},
      {"timer", std::regex(R"(\b(cudaEvent\w*)\b)"), nullptr},
      {"graph capture", std::regex(R"(\b(cudaGraph\w*|cudaStreamBeginCapture|cudaStreamEndCapture)\b)"), nullptr},
      // cuTensorMapEncodeTiled excepted: see kAllowedRuntime.
      {"CUDA driver API", std::regex(R"(\bcu(?!TensorMapEncodeTiled\s*\()[A-Z][A-Za-z0-9]+(_v\d+)?\s*\()"), nullptr},
      {"device or context control", std::regex(R"(\b(cudaSetDevice\w*|cudaDeviceSetCacheConfig|cudaDeviceSetSharedMemConfig|cudaIpc\w*|cudaSetValidDevices)\b)"), nullptr},
      {"vendor library header", std::regex(R"(#\s*include\s*[<"](cublas|cublasLt)[^>"]*[>"])"), "cublas"},
      {"vendor library header", std::regex(R"(#\s*include\s*[<"](cudnn)[^>"]*[>"])"), "cudnn"},
      {"vendor library header",
       std::regex(R"(#\s*include\s*[<"](thrust|cufft|curand|cusparse|cusolver|nccl|cutlass|cute|torch|ATen|c10)[^>"]*[>"])"),
       nullptr},
      {"vendor library call", std::regex(R"(\b(thrust::\w+|cub::Device\w+|cutlass::\w+|cute::\w+))"), nullptr},
  };
  return r;
}

// Mutable device globals (`.global` variables) and device-side allocation.
std::vector<std::string> ptx_problems(const std::string& ptx) {
  std::vector<std::string> out;
  static const std::regex global_var(R"(^\s*(\.visible\s+|\.weak\s+|\.extern\s+)?\.global\s+(\.align\s+\d+\s+)?\.\w+\s+([A-Za-z_$][\w$]*))");
  static const std::regex malloc_decl(R"(^\s*\.extern\s+\.func\s*(\([^)]*\))?\s*(malloc|free|__nv_aligned_device_malloc)\b)");
  std::istringstream in(ptx);
  std::string line;
  std::set<std::string> globals;
  bool device_malloc = false;
  while (std::getline(in, line)) {
    std::smatch m;
    if (std::regex_search(line, m, global_var)) globals.insert(m[3].str());
    if (std::regex_search(line, m, malloc_decl)) device_malloc = true;
  }
  if (!globals.empty()) {
    std::string names;
    for (const auto& g : globals) names += (names.empty() ? "" : ", ") + g;
    out.push_back("keeps mutable device globals, which can carry results across calls: " + names);
  }
  if (device_malloc) out.push_back("allocates device memory inside a kernel (malloc/free in device code)");
  return out;
}

}  // namespace

std::vector<gpu_kernel_resources> parse_ptxas_report(const std::string& text) {
  std::vector<gpu_kernel_resources> out;
  static const std::regex entry(R"(Compiling entry function '([^']+)')");
  static const std::regex props(R"((\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads)");
  static const std::regex used(R"(Used (\d+) registers)");
  static const std::regex barriers(R"(used (\d+) barriers)");
  static const std::regex smem(R"((\d+) bytes smem)");
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    std::smatch m;
    if (std::regex_search(line, m, entry)) {
      out.push_back({});
      out.back().name = m[1].str();
      continue;
    }
    if (out.empty()) continue;
    gpu_kernel_resources& k = out.back();
    if (std::regex_search(line, m, props)) {
      k.stack_bytes = to_int(m[1]);
      k.spill_store_bytes = to_int(m[2]);
      k.spill_load_bytes = to_int(m[3]);
    }
    if (std::regex_search(line, m, used)) {
      k.registers = to_int(m[1]);
      if (std::regex_search(line, m, barriers)) k.barriers = to_int(m[1]);
      if (std::regex_search(line, m, smem)) k.shared_bytes = to_int(m[1]);
    }
  }
  return out;
}

std::string nvcc_path() { return gpu::find_tool("KEVOLVE_NVCC", "nvcc", "/usr/local/cuda/bin/nvcc"); }

std::string detect_cuda_arch() {
  if (const char* a = std::getenv("KEVOLVE_CUDA_ARCH"); a && *a) return a;
  auto r = run_subprocess({"nvidia-smi", "--query-gpu=compute_cap", "--format=csv,noheader"},
                          timeout_options(std::chrono::seconds(10)));
  if (r && r->ok()) {
    std::string cap = gpu::trim(r->output.substr(0, r->output.find('\n')));
    cap.erase(std::remove(cap.begin(), cap.end(), '.'), cap.end());
    // Hopper's and Blackwell's arch-specific features (wgmma, setmaxnreg,
    // tcgen05) need the 'a' target; kernels are built for this GPU only.
    if (!cap.empty() && std::all_of(cap.begin(), cap.end(), ::isdigit))
      return "sm_" + cap + (cap == "90" || cap == "100" ? "a" : "");
  }
  return "sm_90a";
}

fs::path cuda_worker_executable() {
  if (const char* w = std::getenv("KEVOLVE_CUDA_WORKER"); w && *w) return w;
  return worker_executable().parent_path() / "kevolve-cuda-worker";
}

fs::path hip_on_cuda_include() { return data_root() / "src" / "abi" / "hip_on_cuda"; }

cuda_compiler::cuda_compiler(fs::path cache_dir, std::chrono::seconds timeout, std::string arch, bool hip_source)
    : cache_(std::move(cache_dir), timeout), arch_(arch.empty() ? detect_cuda_arch() : std::move(arch)),
      hip_source_(hip_source), nvcc_(nvcc_path()) {}

std::vector<std::string> cuda_compiler::flags(const std::vector<std::string>& libraries) const {
  const std::string cc = arch_.substr(arch_.find('_') + 1);  // "90" or "90a"
  std::vector<std::string> f = {"-std=c++17", "-O3", "-gencode", "arch=compute_" + cc + ",code=[sm_" + cc + ",compute_" + cc + "]",
                                "-Xcompiler", "-fPIC", "-shared", "-cudart", "shared", "-Xptxas", "-v", "-lineinfo",
                                "-I" + (data_root() / "src" / "abi").string(),
                                // The driver (nvcc's stubs at link time) is linked only by a
                                // library that calls it: cuTensorMapEncodeTiled for TMA.
                                "-Xlinker", "--as-needed", "-lcuda"};
  if (hip_source_) {  // ahead of any ROCm headers installed on the node; .hip is not a suffix nvcc knows
    f.insert(f.begin(), "-I" + hip_on_cuda_include().string());
    f.insert(f.begin(), "cu");
    f.insert(f.begin(), "-x");
  }
  for (const auto& l : libraries) {
    if (l == "cublas") {
      f.push_back("-lcublas");
      f.push_back("-lcublasLt");
    } else if (l == "cudnn") {
      f.push_back("-lcudnn");
    }
  }
  return f;
}

expected<std::string> cuda_compiler::toolchain() {
  if (toolchain_id_.empty()) {
    auto v = run_subprocess({nvcc_, "--version"}, timeout_options(std::chrono::seconds(20)));
    if (!v || !v->ok())
      return make_error(errc::toolchain_error, "cannot run " + nvcc_ + " (set KEVOLVE_NVCC or put nvcc on PATH)" +
                                                   (v ? ": " + gpu::trim(v->output) : ""));
    std::string ver = "unknown";
    std::smatch m;
    if (std::regex_search(v->output, m, std::regex(R"(V(\d+\.\d+\.\d+))"))) ver = m[1].str();
    auto abi = read_file(data_root() / "src" / "abi" / "kevolve" / "abi.h");
    auto shim = hip_source_ ? read_file(hip_on_cuda_include() / "hip" / "hip_runtime.h") : expected<std::string>("");
    toolchain_id_ = "nvcc " + ver + " (" + content_hash({v->output}).substr(0, 12) + ") | " + arch_ + " | abi " +
                    content_hash({abi ? *abi : "", shim ? *shim : ""}).substr(0, 12);
  }
  return toolchain_id_;
}

expected<compiled_kernel> cuda_compiler::compile(const std::string& source, const std::vector<std::string>& libraries,
                                                 const std::string& display_name) {
  auto tool = toolchain();
  if (!tool) return tl::unexpected(tool.error());
  compile_recipe r;
  r.compiler = nvcc_;
  r.flags = flags(libraries);
  r.toolchain = *tool;
  r.scratch_prefix = "kevolve-nvcc-";
  r.source_file = "kernel.cu";
  // -keep leaves kernel.ptx in the scratch directory; it is cached beside the library.
  r.scratch_args = [](const compile_scratch& s) {
    return std::vector<std::string>{"-keep", "-keep-dir", s.dir.string(), "-Xlinker",
                                    "--version-script=" + s.exports.string(), "-Xlinker", "--no-undefined"};
  };
  r.artefacts = {{"kernel.ptx", ".ptx"}};
  r.target = arch_;
  r.parse_diagnostics = [](compile_report& report) { report.kernels = parse_ptxas_report(report.diagnostics); };
  return cache_.compile(source, r, display_name);
}

std::vector<policy_violation> scan_cuda_source(const std::string& source, const std::vector<std::string>& allowed) {
  std::vector<policy_violation> out;
  // Inline PTX is how Hopper's instructions are reached; the host side is
  // still confined by the worker's sandbox and the import check.
  for (auto& v : scan_source(source, allowed))
    if (v.rule != "inline assembly") out.push_back(std::move(v));
  const std::string code = strip_comments_and_strings(source);
  gpu::apply_rules(code, cuda_rules(), allowed, out);
  gpu::scan_chevron_launches(code, out);
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.line < b.line; });
  return out;
}

abi_check check_cuda_library(const elf_report& elf, const std::string& ptx, const std::vector<std::string>& allowed) {
  abi_check c;
  // Exports, the CPU list of forbidden imports and load-time code first; the
  // host statics of nvcc's registration are filtered out below.
  elf_report host = elf;
  host.mutable_statics.clear();
  for (const auto& s : elf.mutable_statics)
    if (!nvcc_generated(s)) host.mutable_statics.push_back(s);
  // nvcc adds one constructor (fatbinary registration) to the usual one.
  if (host.init_functions > 0) --host.init_functions;
  c = check_candidate_library(host);
  if (c.result != status::ok) return c;

  std::string bad;
  for (const auto& imp : elf.needed)
    if (!allowed_needed(imp, allowed)) bad += (bad.empty() ? "" : ", ") + imp;
  if (!bad.empty()) {
    c.result = status::suspicious;
    c.reason = "links libraries the operator does not allow (library fallback): " + bad;
    return c;
  }
  for (const auto& i : elf.imports) {
    const std::string base = i.substr(0, i.find('@'));
    const bool runtime = base.rfind("cuda", 0) == 0 || base.rfind("__cuda", 0) == 0 || base.rfind("cu", 0) == 0;
    if (base.rfind("cublas", 0) == 0 && allowed_needed("libcublas.so", allowed)) continue;
    if (base.rfind("cudnn", 0) == 0 && allowed_needed("libcudnn.so", allowed)) continue;
    if (runtime && !kAllowedRuntime.count(base)) bad += (bad.empty() ? "" : ", ") + base;
  }
  if (!bad.empty()) {
    c.result = status::suspicious;
    c.reason = "calls CUDA functions a kernel may not use (synchronization, streams, allocation, copies, cache "
               "control, events or libraries): " + bad;
    return c;
  }
  for (const auto& p : ptx_problems(ptx)) {
    c.result = status::suspicious;
    c.reason = p;
    return c;
  }
  return c;
}

const std::string& cuda_backend::toolchain_id() {
  if (id_.empty()) {
    auto t = compiler_.toolchain();
    id_ = t ? *t : "nvcc unavailable";
  }
  return id_;
}

expected<abi_check> cuda_backend::check_compiled(const compiled_kernel& k, const std::vector<std::string>& allowed) const {
  auto elf = inspect_elf(k.library);
  if (!elf) return tl::unexpected(elf.error());
  auto ptx = read_file(cuda_compiler::ptx_path(k));
  if (!ptx) return tl::unexpected(ptx.error());
  return check_cuda_library(*elf, *ptx, allowed);
}

}  // namespace kevolve::eval
