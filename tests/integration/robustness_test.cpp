// The evaluator survives a long run of kernels that crash, hang, exhaust
// memory, fork or scribble past their buffers, still accepts a good kernel
// afterwards, and leaves no processes or temporary files behind.
#include <dirent.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>

#include <gtest/gtest.h>

#include "support/test_env.h"

namespace kevolve::testing {
namespace {

using eval::status;

// Processes whose parent is this test.
int child_processes() {
  int n = 0;
  const std::string self = std::to_string(::getpid());
  for (const auto& e : std::filesystem::directory_iterator("/proc")) {
    const std::string name = e.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream in(e.path() / "stat");
    std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const size_t close = stat.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream fields(stat.substr(close + 2));
    std::string state, ppid;
    fields >> state >> ppid;
    if (ppid == self) ++n;
  }
  return n;
}

// Directories and files in `dir` and in the scratch roots there (common/scratch.h),
// not counting the roots themselves.
size_t entries(const std::filesystem::path& dir) {
  size_t n = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    n += e.path().filename().string().find('@') != std::string::npos ? entries(e.path()) : 1;
  return n;
}

TEST(Robustness, TwoHundredBadKernelsInARowThenAGoodOne) {
  auto tmp = temp_dir::create("kevolve-robustness-");
  ASSERT_TRUE(tmp.has_value());
  const char* old_tmp = std::getenv("TMPDIR");
  const std::string saved = old_tmp ? old_tmp : "";
  ::setenv("TMPDIR", tmp->path().c_str(), 1);

  const std::vector<std::pair<std::string, status>> bad = {
      {"cheats/crash_segfault.cpp", status::crashed},  {"cheats/crash_abort.cpp", status::crashed},
      {"cheats/crash_exit0.cpp", status::crashed},     {"cheats/r19_infinite_loop.cpp", status::timeout},
      {"cheats/alloc_huge.cpp", status::crashed},      {"cheats/fork_attempt.cpp", status::suspicious},
      {"cheats/write_past_end.cpp", status::crashed},  {"cheats/r02_untouched_output.cpp", status::wrong_result}};
  std::map<std::string, std::string> sources;
  for (const auto& [file, _] : bad) sources[file] = kernel_source(file);

  {
    auto op = test_operator("t_softmax");
    auto options = fast_options();
    options.call_timeout = std::chrono::milliseconds(300);
    auto e = eval::evaluator::create(op, "fp32", options, machine_profile());
    ASSERT_TRUE(e.has_value()) << e.error().message;
    const int baseline_workers = child_processes();  // the baseline and reference workers
    EXPECT_EQ(baseline_workers, 2);
    const size_t baseline_dirs = entries(tmp->path());  // their private directories
    EXPECT_EQ(baseline_dirs, 2u);

    for (int i = 0; i < 200; ++i) {
      const auto& [file, want] = bad[size_t(i) % bad.size()];
      auto v = (*e)->evaluate(sources[file]);
      ASSERT_TRUE(v.has_value()) << file << ": " << v.error().message;
      ASSERT_EQ(eval::to_string(v->result), std::string(eval::to_string(want))) << "kernel " << i << " " << file << ": " << v->reason;
      // Beside them, only the worker started for the next candidate (prestart_worker).
      ASSERT_EQ(child_processes(), baseline_workers + 1) << "a worker outlived kernel " << i << " (" << file << ")";
    }
    auto good = (*e)->evaluate(kernel_source("softmax_good.cpp"));
    ASSERT_TRUE(good.has_value());
    EXPECT_EQ(good->result, status::ok) << good->reason;
    EXPECT_GT(good->fitness, 0.0);
    EXPECT_EQ(entries(tmp->path()), baseline_dirs + 1) << "temporary files left by candidate workers (beside the next one's)";
  }
  EXPECT_EQ(child_processes(), 0) << "workers outlived their evaluator";
  EXPECT_EQ(entries(tmp->path()), 0u);
  if (saved.empty()) ::unsetenv("TMPDIR");
  else ::setenv("TMPDIR", saved.c_str(), 1);
}

}  // namespace
}  // namespace kevolve::testing
