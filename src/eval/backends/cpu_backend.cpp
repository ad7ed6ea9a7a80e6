#include "eval/backends/cpu_backend.h"

#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>

#include "common/fs.h"
#include "common/hash.h"
#include "common/paths.h"
#include "common/subprocess.h"

namespace kevolve::eval {
namespace fs = std::filesystem;

namespace {

std::string cpu_identity() {
  std::ifstream in("/proc/cpuinfo");
  std::string line, model, flags;
  while (std::getline(in, line)) {
    if (model.empty() && line.rfind("model name", 0) == 0) model = line.substr(line.find(':') + 2);
    if (flags.empty() && line.rfind("flags", 0) == 0) flags = line.substr(line.find(':') + 2);
  }
  return model + " | " + content_hash({flags});
}

const std::set<std::string> kForbiddenImports = {
    "dlopen", "dlsym", "dlvsym", "dlmopen", "dl_iterate_phdr", "_r_debug", "fork", "vfork", "execve", "execv",
    "execvp", "execvpe", "execl", "execlp", "execle", "system", "popen", "posix_spawn", "posix_spawnp", "syscall",
    "ptrace", "sigaction", "signal", "__sysv_signal", "sysv_signal", "bsd_signal", "sigset", "ssignal", "mprotect", "clone", "clone3", "kill", "tgkill",
    "prctl", "setrlimit", "prlimit", "socket", "connect", "clock_gettime", "gettimeofday", "getenv", "fopen", "open",
    "open64", "openat", "creat"};

}  // namespace

int count_vectorized_loops(const std::string& opt_info) {
  int n = 0;
  std::istringstream in(opt_info);
  std::string line;
  while (std::getline(in, line))
    if (line.find("loop vectorized") != std::string::npos) ++n;
  return n;
}

cpu_compiler::cpu_compiler(fs::path cache_dir, std::chrono::seconds timeout, std::vector<std::string> extra_flags,
                           std::string id_tag)
    : cache_(std::move(cache_dir), timeout), extra_flags_(std::move(extra_flags)), id_tag_(std::move(id_tag)) {
  const char* cxx = std::getenv("KEVOLVE_CXX");
  compiler_ = (cxx && *cxx) ? cxx : "g++";
}

std::vector<std::string> cpu_compiler::flags(const std::vector<std::string>& libraries) const {
  std::vector<std::string> f = {"-std=gnu++17", "-O3", "-march=native", "-fopenmp", "-fPIC", "-shared",
                                "-Wall", "-Wextra", "-Wl,--no-undefined", "-I" + (data_root() / "src" / "abi").string()};
  f.insert(f.end(), extra_flags_.begin(), extra_flags_.end());
  for (const auto& l : libraries) f.push_back(l == "openblas" ? "-lopenblas" : "-l" + l);
  f.push_back("-lm");
  return f;
}

const std::string& cpu_compiler::toolchain_id() {
  if (toolchain_id_.empty()) {
    auto v = run_subprocess({compiler_, "-dumpfullversion"}, timeout_options(std::chrono::seconds(10)));
    std::string ver = v && v->ok() ? v->output : "unknown";
    while (!ver.empty() && (ver.back() == '\n' || ver.back() == ' ')) ver.pop_back();
    auto abi = read_file(data_root() / "src" / "abi" / "kevolve" / "abi.h");
    toolchain_id_ = compiler_ + " " + ver + " | " + cpu_identity() + " | abi " + content_hash({abi ? *abi : ""}) + id_tag_;
  }
  return toolchain_id_;
}

expected<compiled_kernel> cpu_compiler::compile(const std::string& source, const std::vector<std::string>& libraries,
                                                const std::string& display_name) {
  compile_recipe r;
  r.compiler = compiler_;
  r.flags = flags(libraries);
  r.toolchain = toolchain_id();
  r.scratch_args = [](const compile_scratch& s) {
    return std::vector<std::string>{"-Wl,--version-script=" + s.exports.string(),
                                    "-fopt-info-vec-optimized=" + (s.dir / "vec.txt").string()};
  };
  r.read_outputs = [](const compile_scratch& s, compile_report& report) {
    if (auto info = read_file(s.dir / "vec.txt")) report.vectorized_loops = count_vectorized_loops(*info);
  };
  return cache_.compile(source, r, display_name);
}

abi_check check_candidate_library(const elf_report& elf) {
  abi_check c;
  bool has_kernel = false;
  for (const auto& e : elf.exports) {
    if (e == "kevolve_kernel") has_kernel = true;
  }
  if (!has_kernel) {
    c.result = status::compile_failed;
    c.reason = "the library does not export extern \"C\" int kevolve_kernel(const kv_args*)";
    return c;
  }
  std::string bad_imports;
  for (const auto& i : elf.imports) {
    std::string base = i.substr(0, i.find('@'));
    if (kForbiddenImports.count(base)) bad_imports += (bad_imports.empty() ? "" : ", ") + base;
  }
  if (!bad_imports.empty()) {
    c.result = status::suspicious;
    c.reason = "calls functions a kernel may not use: " + bad_imports;
    return c;
  }
  if (!elf.mutable_statics.empty()) {
    std::string names;
    for (size_t i = 0; i < elf.mutable_statics.size() && i < 5; ++i) names += (i ? ", " : "") + elf.mutable_statics[i];
    c.result = status::suspicious;
    c.reason = "keeps mutable static or thread-local data, which can carry results across calls: " + names;
    return c;
  }
  if (elf.init_functions > 1) {
    c.result = status::suspicious;
    c.reason = "runs code when the library is loaded (constructors or global objects)";
    return c;
  }
  return c;
}

expected<abi_check> cpu_backend::check_compiled(const compiled_kernel& k, const std::vector<std::string>&) const {
  auto elf = inspect_elf(k.library);
  if (!elf) return tl::unexpected(elf.error());
  return check_candidate_library(*elf);
}

worker_options cpu_backend::worker(int threads, bool sandbox, uint64_t address_space_bytes) const {
  worker_options wo;
  wo.executable = worker_executable();
  wo.threads = threads;
  wo.sandbox = sandbox;
  wo.address_space_bytes = address_space_bytes;
  return wo;
}

}  // namespace kevolve::eval
