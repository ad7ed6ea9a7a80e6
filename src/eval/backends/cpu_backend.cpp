#include "eval/backends/cpu_backend.h"

#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

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
    : cache_dir_(std::move(cache_dir)), timeout_(timeout), extra_flags_(std::move(extra_flags)), id_tag_(std::move(id_tag)) {
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
  compiled_kernel k;
  std::string flag_text;
  for (const auto& f : flags(libraries)) flag_text += f + " ";
  k.hash = content_hash({source, flag_text, toolchain_id()});
  const fs::path so = cache_dir_ / (k.hash + ".so");
  const fs::path meta = cache_dir_ / (k.hash + ".json");

  // Cache hit: the metadata is written last, so its presence means complete.
  if (auto m = read_file(meta)) {
    try {
      auto j = nlohmann::json::parse(*m);
      k.ok = j.at("ok").get<bool>();
      k.report.seconds = j.at("seconds").get<double>();
      k.report.diagnostics = j.at("diagnostics").get<std::string>();
      k.report.vectorized_loops = j.at("vectorized_loops").get<int>();
      k.report.code_bytes = j.at("code_bytes").get<size_t>();
      k.report.cached = true;
      if (!k.ok || fs::exists(so)) {
        if (k.ok) k.library = so;
        return k;
      }
    } catch (const nlohmann::json::exception&) {
      // A damaged entry is rebuilt below.
    }
  }

  std::error_code ec;
  fs::create_directories(cache_dir_, ec);
  if (ec) return make_error(errc::io_error, "cannot create compile cache " + cache_dir_.string() + ": " + ec.message());
  auto work = temp_dir::create("kevolve-compile-");
  if (!work) return tl::unexpected(work.error());
  const fs::path src = work->path() / "kernel.cpp";
  const fs::path out = work->path() / "kernel.so";
  const fs::path vers = work->path() / "exports.map";
  const fs::path vec = work->path() / "vec.txt";
  {
    std::ofstream(src, std::ios::binary) << source;
    // Only kevolve_kernel is visible: a candidate cannot interpose anything.
    std::ofstream(vers) << "{ global: kevolve_kernel; local: *; };\n";
  }
  std::vector<std::string> argv = {compiler_};
  for (const auto& f : flags(libraries)) {
    if (f.rfind("-l", 0) == 0) continue;
    argv.push_back(f);
  }
  argv.push_back("-Wl,--version-script=" + vers.string());
  argv.push_back("-fopt-info-vec-optimized=" + vec.string());
  argv.push_back(src.string());
  argv.push_back("-o");
  argv.push_back(out.string());
  for (const auto& f : flags(libraries))
    if (f.rfind("-l", 0) == 0) argv.push_back(f);

  subprocess_options opts;
  opts.timeout = timeout_;
  opts.cwd = work->path().string();
  opts.max_output_bytes = 64 * 1024;
  auto r = run_subprocess(argv, opts);
  if (!r) return make_error(errc::toolchain_error, "cannot run " + compiler_ + ": " + r.error().message);
  k.report.seconds = r->seconds;
  // Paths of the scratch directory mean nothing to the reader.
  std::string diag = r->output;
  for (size_t pos; (pos = diag.find(src.string())) != std::string::npos;) diag.replace(pos, src.string().size(), display_name);
  k.report.diagnostics = diag;
  if (r->exit_code == 127) return make_error(errc::toolchain_error, "cannot run " + compiler_ + ": not found");
  if (r->timed_out) {
    k.report.diagnostics = "compilation exceeded " + std::to_string(timeout_.count()) + " s and was killed\n" + diag;
  } else if (r->ok() && fs::exists(out)) {
    k.ok = true;
    auto info = read_file(vec);
    if (info) k.report.vectorized_loops = count_vectorized_loops(*info);
    if (auto elf = inspect_elf(out)) k.report.code_bytes = elf->code_bytes;
    // Atomic: another evaluator sharing the cache may be loading `so` right now.
    if (auto w = install_file_atomic(out, so); !w)
      return make_error(errc::io_error, "cannot store " + so.string() + ": " + w.error().message);
    k.library = so;
  }
  // Only successes are cached: a failure costs little to reproduce, and a
  // rejected file must leave nothing behind.
  if (k.ok) {
    nlohmann::json j = {{"ok", k.ok}, {"seconds", k.report.seconds}, {"diagnostics", k.report.diagnostics},
                        {"vectorized_loops", k.report.vectorized_loops}, {"code_bytes", k.report.code_bytes}};
    if (auto w = write_file_atomic(meta, j.dump()); !w) return tl::unexpected(w.error());
  }
  return k;
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
