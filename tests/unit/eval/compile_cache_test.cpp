// The one compile-and-cache path (eval/backends/compile_cache.h) as each
// backend's user sees it: a compile over its time limit and a source the
// compiler rejects read the same verdict reason on cpu, mtia_emu, cuda and
// hip; a killed or rejected compile leaves no cache entry; a cache hit
// returns the same library without running the compiler; the cache keys are
// the ones the per-backend copies computed, so existing caches stay valid.
#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>

#include <gtest/gtest.h>

#include "common/fs.h"
#include "common/hash.h"
#include "common/paths.h"
#include "common/subprocess.h"
#include "eval/backends/backend.h"
#include "eval/backends/cpu_backend.h"
#include "eval/backends/cuda_backend.h"
#include "eval/backends/hip_backend.h"

namespace kevolve::eval {
namespace {

namespace fs = std::filesystem;

// Empty when `backend`'s compiler runs here; else why the test is skipped.
std::string no_compiler(const std::string& backend) {
  if (backend == "cuda") {
    auto r = run_subprocess({nvcc_path(), "--version"}, timeout_options(std::chrono::seconds(20)));
    return r && r->ok() ? "" : "no nvcc: " + nvcc_path() + " cannot run (set KEVOLVE_NVCC or put nvcc on PATH)";
  }
  if (backend == "hip") {
    auto r = run_subprocess({hipcc_path(), "--offload-arch=gfx90a", "--version"}, timeout_options(std::chrono::seconds(30)));
    return r && r->ok() ? "" : "no hipcc: " + hipcc_path() + " cannot run (scripts/install-deps.sh installs it)";
  }
  return "";
}

// 2^48 distinct instantiations: every compiler (g++, nvcc's front end and
// host compiler, clang under hipcc) spins far past any time limit here,
// without hitting a depth or step limit that would end it with an error.
const char* const kSpinningSource =
    "#include \"kevolve/abi.h\"\n"
    "template <int N, unsigned long long M> struct spin {\n"
    "  static constexpr unsigned long long value = spin<N - 1, 2 * M>::value + spin<N - 1, 2 * M + 1>::value;\n"
    "};\n"
    "template <unsigned long long M> struct spin<0, M> { static constexpr unsigned long long value = M; };\n"
    "extern \"C\" int kevolve_kernel(const kv_args*) { return int(spin<48, 1>::value & 1); }\n";

const char* const kRejectedSource =
    "#include \"kevolve/abi.h\"\n"
    "extern \"C\" int kevolve_kernel(const kv_args* a) { return a->no_such_field; }\n";

// Files anywhere in the test cache named for the entry `hash`.
std::vector<fs::path> cache_files(const std::string& hash) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(cache_root(), ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec))
    if (it->path().filename().string().rfind(hash, 0) == 0) out.push_back(it->path());
  return out;
}

class SameFailureOnEveryBackend : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (const std::string why = no_compiler(GetParam()); !why.empty()) GTEST_SKIP() << why;
  }
  static_check check(const std::string& source, std::chrono::seconds limit) {
    auto b = make_backend(GetParam(), limit);
    EXPECT_TRUE(b.has_value()) << b.error().message;
    if (!b) return {};
    source_name_ = (*b)->source_name();
    auto c = check_statically(**b, source, {});
    EXPECT_TRUE(c.has_value()) << c.error().message;
    return c ? *c : static_check{};
  }
  std::string source_name_;
};

TEST_P(SameFailureOnEveryBackend, ACompileOverTheTimeLimitIsKilledAndSaysSo) {
  const static_check c = check(kSpinningSource, std::chrono::seconds(1));
  EXPECT_EQ(c.result, status::compile_failed);
  EXPECT_EQ(c.reason, "compilation exceeded 1 s and was killed");
  EXPECT_EQ(c.kernel.report.diagnostics.rfind("compilation exceeded 1 s and was killed\n", 0), 0u)
      << c.kernel.report.diagnostics;
  EXPECT_FALSE(c.kernel.report.cached);
  EXPECT_GE(c.kernel.report.seconds, 1.0);
  ASSERT_EQ(c.kernel.hash.size(), 32u);
  EXPECT_TRUE(cache_files(c.kernel.hash).empty()) << "a killed compile left " << cache_files(c.kernel.hash).front();
}

TEST_P(SameFailureOnEveryBackend, ARejectedSourceReadsTheCompilerRejectedIt) {
  const static_check c = check(kRejectedSource, std::chrono::seconds(300));
  EXPECT_EQ(c.result, status::compile_failed);
  EXPECT_EQ(c.reason, "the compiler rejected the kernel");
  const std::string& d = c.kernel.report.diagnostics;
  EXPECT_NE(d.find("no_such_field"), std::string::npos) << d;
  EXPECT_NE(d.find(source_name_), std::string::npos) << "diagnostics name the kernel as " << source_name_ << ":\n" << d;
  EXPECT_EQ(d.find("kevolve-"), std::string::npos) << "diagnostics name the scratch directory:\n" << d;
  ASSERT_EQ(c.kernel.hash.size(), 32u);
  EXPECT_TRUE(cache_files(c.kernel.hash).empty()) << "a rejected compile left " << cache_files(c.kernel.hash).front();
}

INSTANTIATE_TEST_SUITE_P(Backends, SameFailureOnEveryBackend, ::testing::Values("cpu", "mtia_emu", "cuda", "hip"),
                         [](const auto& p) { return p.param; });

// $KEVOLVE_CXX set for the lifetime of the object, the old value restored after.
class scoped_cxx {
 public:
  explicit scoped_cxx(const std::string& value) {
    if (const char* old = std::getenv("KEVOLVE_CXX")) old_ = old;
    ::setenv("KEVOLVE_CXX", value.c_str(), 1);
  }
  ~scoped_cxx() {
    if (old_) ::setenv("KEVOLVE_CXX", old_->c_str(), 1);
    else ::unsetenv("KEVOLVE_CXX");
  }

 private:
  std::optional<std::string> old_;
};

int lines_of(const fs::path& file) {
  std::ifstream in(file);
  int n = 0;
  for (std::string line; std::getline(in, line);) ++n;
  return n;
}

TEST(CompileCache, AHitReturnsTheSameLibraryWithoutRunningTheCompiler) {
  auto dir = temp_dir::create("kevolve-compile-cache-test-");
  ASSERT_TRUE(dir.has_value()) << dir.error().message;
  // g++ behind a script that counts the compiles (not the version query).
  const fs::path runs = dir->path() / "runs.txt";
  const fs::path cxx = dir->path() / "counting-g++";
  std::ofstream(cxx) << "#!/bin/sh\n[ \"$1\" = -dumpfullversion ] || echo run >> '" << runs.string() << "'\nexec g++ \"$@\"\n";
  fs::permissions(cxx, fs::perms::owner_all);
  const scoped_cxx env(cxx.string());
  cpu_compiler compiler(dir->path() / "cache", std::chrono::seconds(120));
  const std::string src = "#include \"kevolve/abi.h\"\n"
                          "extern \"C\" int kevolve_kernel(const kv_args* a) { return a->num_inputs > 7; }\n";

  auto first = compiler.compile(src, {});
  ASSERT_TRUE(first && first->ok) << (first ? first->report.diagnostics : first.error().message);
  EXPECT_FALSE(first->report.cached);
  EXPECT_EQ(lines_of(runs), 1);
  struct stat before {};
  ASSERT_EQ(::stat(first->library.c_str(), &before), 0);

  auto second = compiler.compile(src, {});
  ASSERT_TRUE(second && second->ok) << (second ? second->report.diagnostics : second.error().message);
  EXPECT_TRUE(second->report.cached);
  EXPECT_EQ(lines_of(runs), 1) << "a cache hit ran the compiler";
  EXPECT_EQ(second->library, first->library);
  EXPECT_EQ(second->hash, first->hash);
  EXPECT_EQ(second->report.code_bytes, first->report.code_bytes);
  EXPECT_EQ(second->report.diagnostics, first->report.diagnostics);
  struct stat after {};
  ASSERT_EQ(::stat(second->library.c_str(), &after), 0);
  EXPECT_EQ(after.st_ino, before.st_ino);
  EXPECT_EQ(after.st_mtim.tv_sec, before.st_mtim.tv_sec);
  EXPECT_EQ(after.st_mtim.tv_nsec, before.st_mtim.tv_nsec);

  // Another source is another entry, compiled.
  auto other = compiler.compile(src + "// another\n", {});
  ASSERT_TRUE(other && other->ok);
  EXPECT_FALSE(other->report.cached);
  EXPECT_NE(other->hash, first->hash);
  EXPECT_EQ(lines_of(runs), 2);
}

std::string joined(const std::vector<std::string>& flags) {
  std::string s;
  for (const auto& f : flags) s += f + " ";
  return s;
}

// The keys the per-backend copies computed before the shared path: a change
// here would orphan every compile cache on disk.
TEST(CompileCache, KeysAreThoseOfEarlierCaches) {
  cpu_compiler cpu(cache_root() / "compile" / "compile-cache-tests", std::chrono::seconds(120));
  auto k = cpu.compile(kRejectedSource, {"openblas"});
  ASSERT_TRUE(k.has_value()) << k.error().message;
  EXPECT_EQ(k->hash, content_hash({kRejectedSource, joined(cpu.flags({"openblas"})), cpu.toolchain_id()}));

  if (no_compiler("cuda").empty()) {
    cuda_compiler cuda(cache_root() / "compile" / "compile-cache-tests", std::chrono::seconds(120), "sm_90");
    auto c = cuda.compile(kRejectedSource, {});
    ASSERT_TRUE(c.has_value()) << c.error().message;
    EXPECT_EQ(c->hash, content_hash({kRejectedSource, joined(cuda.flags({})), *cuda.toolchain()}));
  }
  if (no_compiler("hip").empty()) {
    hip_compiler hip(cache_root() / "compile" / "compile-cache-tests", std::chrono::seconds(120), {"gfx90a"});
    for (const char* name : {"kernel.hip", "baseline.cu"}) {
      auto h = hip.compile(kRejectedSource, {}, name);
      ASSERT_TRUE(h.has_value()) << h.error().message;
      const std::string extra = std::string(name) == "baseline.cu" ? "cuda_on_hip" : "";
      EXPECT_EQ(h->hash, content_hash({kRejectedSource, joined(hip.flags({})), *hip.toolchain(), extra})) << name;
    }
  }
}

}  // namespace
}  // namespace kevolve::eval
