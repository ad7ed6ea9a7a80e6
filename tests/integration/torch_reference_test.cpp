// An operator from PyTorch alone (tests/data/operators/ts_swiglu.yaml: a
// `torch` line, no C++ reference, no baselines) through the real evaluator:
// the reference is PyTorch in fp64 in a trusted process of its own, the
// fitness is over the faster of PyTorch eager and torch.compile, and a
// cheating or wrong kernel fails against it as against a C++ reference.
#include <gtest/gtest.h>

#include <cmath>

#include <filesystem>

#include "common/paths.h"
#include "common/scratch.h"
#include "eval/torch_baseline.h"
#include "support/test_env.h"

namespace kevolve::testing {
namespace {

// y = silu(g) * u, scaled by `scale` (1: right).
std::string swiglu_kernel(const std::string& scale, const std::string& extra = "") {
  return R"(#include <kevolve/abi.h>
#include <cmath>
#include <cstdio>
#include <dirent.h>
#include <cstring>
)" + extra + R"(
extern "C" int kevolve_kernel(const kv_args* a) {
  const float* g = (const float*)a->inputs[0].data;
  const float* u = (const float*)a->inputs[1].data;
  float* y = (float*)a->outputs[0].data;
  const int64_t n = a->inputs[0].dims[0] * a->inputs[0].dims[1];
  for (int64_t i = 0; i < n; ++i) y[i] = g[i] / (1.0f + std::exp(-g[i])) * u[i] * )" + scale + R"(;
  return 0;
}
)";
}

class TorchReference : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string why = eval::probe_torch(python_executable(), "cpu");
    if (!why.empty()) GTEST_SKIP() << "no PyTorch for the CPU (scripts/install-python.sh installs it in .venv): " << why;
    op_ = test_operator("ts_swiglu");
  }
  std::unique_ptr<eval::evaluator> make(const std::string& fitness = "", bool torch = true) {
    eval::evaluator_options o = fast_options();
    o.torch_baselines = torch;
    o.torch_compile = false;  // ~15 s of inductor start-up per process on 2 cores: torch_baseline_test times it
    o.fitness = fitness;
    auto e = eval::evaluator::create(op_, "fp32", o, machine_profile());
    EXPECT_TRUE(e.has_value()) << (e ? "" : e.error().message);
    return e ? std::move(*e) : nullptr;
  }
  eval::verdict run(eval::evaluator& e, const std::string& src) {
    auto v = e.evaluate(src);
    EXPECT_TRUE(v.has_value()) << (v ? "" : v.error().message);
    return v ? *v : eval::verdict{};
  }
  spec::operator_spec op_;
};

TEST_F(TorchReference, AnOperatorFromPyTorchAloneIsVerifiedAndTimedAgainstPyTorch) {
  ASSERT_TRUE(op_.torch_reference());
  ASSERT_TRUE(op_.baselines.empty());
  auto e = make();
  ASSERT_NE(e, nullptr);
  const eval::verdict v = run(*e, swiglu_kernel("1.0f"));
  ASSERT_EQ(v.result, eval::status::ok) << v.reason;
  EXPECT_EQ(v.fitness_basis, "torch");
  EXPECT_EQ(v.baseline, "none (PyTorch only)");
  for (const auto& s : v.shapes) {
    if (s.holdout) continue;
    EXPECT_EQ(s.baseline.runs, 0) << "no plain baseline was timed";
    ASSERT_TRUE(s.torch_eager.measured()) << s.torch_eager.note;
    EXPECT_NEAR(s.fitness_speedup, s.torch_eager.time.median_s / s.candidate.median_s, 1e-9 * s.fitness_speedup);
    EXPECT_LE(s.max_error_ratio, 1.0);
  }
  EXPECT_GT(v.fitness, 0.0);
}

TEST_F(TorchReference, AWrongKernelFailsAgainstThePyTorchReference) {
  auto e = make();
  ASSERT_NE(e, nullptr);
  const eval::verdict v = run(*e, swiglu_kernel("1.001f"));  // 1e-3 off: 100x the fp32 tolerance
  EXPECT_EQ(v.result, eval::status::wrong_result) << v.reason;
  EXPECT_NE(v.reason.find("elements wrong"), std::string::npos) << v.reason;
}

// TRUST.md: the reference is out of a candidate's reach. A kernel that
// tries to plant its own (zero) answer as the reference's output file, and
// returns zeros, is refused by the source policy; behind it, the worker may
// not open files for writing (seccomp, trust_test's sandbox rows) and runs
// as another user, and the PyTorch process's directory is private (0700).
TEST_F(TorchReference, ACandidateCannotReplaceThePyTorchReferencesFiles) {
  const std::string cheat = R"(
static int planted = 0;
static void plant(const char* root) {
  DIR* d = opendir(root);
  if (!d) return;
  while (dirent* e = readdir(d)) {
    if (std::strncmp(e->d_name, "kevolve-", 8) != 0) continue;
    for (int i = 0; i < 4; ++i) {
      char path[4096];
      std::snprintf(path, sizeof path, "%s/%s/out_%d.bin", root, e->d_name, i);
      if (FILE* f = std::fopen(path, "r+b")) {
        static char zeros[1 << 16];
        for (int k = 0; k < 64; ++k) std::fwrite(zeros, 1, sizeof zeros, f);
        std::fclose(f);
        ++planted;
      }
    }
  }
  closedir(d);
}
)";
  std::string src = swiglu_kernel("0.0f", cheat);
  src.replace(src.find("  for (int64_t i"), 0, "  plant(\"/dev/shm\"); plant(\"/tmp\"); if (const char* t = getenv(\"TMPDIR\")) plant(t);\n");
  src.insert(0, "#include <cstdlib>\n");
  auto e = make();
  ASSERT_NE(e, nullptr);
  const eval::verdict v = run(*e, src);
  EXPECT_NE(v.result, eval::status::ok) << "a kernel returning zeros passed: the reference was replaced";
  EXPECT_EQ(v.result, eval::status::suspicious) << v.reason;
  EXPECT_NE(v.reason.find("file or environment access"), std::string::npos) << v.reason;
  // The PyTorch process of this evaluator (started by the right kernel's
  // verification) keeps its files in a directory only its user may enter.
  ASSERT_EQ(run(*e, swiglu_kernel("1.0f")).result, eval::status::ok);
  auto root = process_scratch_root();
  ASSERT_TRUE(root.has_value());
  int dirs = 0;
  for (const auto& d : std::filesystem::directory_iterator(*root)) {
    if (d.path().filename().string().rfind("kevolve-torchref-", 0) != 0) continue;
    ++dirs;
    const auto perms = std::filesystem::status(d.path()).permissions();
    EXPECT_EQ(perms & (std::filesystem::perms::group_all | std::filesystem::perms::others_all), std::filesystem::perms::none)
        << d.path();
  }
  EXPECT_GE(dirs, 1) << "no PyTorch reference directory under " << *root;
}

// Above reference_max_flops PyTorch in fp32 stands in for the fp64
// reference (twice the tolerance), as the plain baseline does for a C++ one.
TEST_F(TorchReference, PyTorchInFp32StandsInAtLargeShapes) {
  op_.reference_max_flops = 1e5;  // every shape
  auto e = make();
  ASSERT_NE(e, nullptr);
  const eval::verdict v = run(*e, swiglu_kernel("1.0f"));
  ASSERT_EQ(v.result, eval::status::ok) << v.reason;
  for (const auto& s : v.shapes) EXPECT_TRUE(s.checked_against_baseline) << s.shape;
  const eval::verdict w = run(*e, swiglu_kernel("1.001f"));
  EXPECT_EQ(w.result, eval::status::wrong_result) << w.reason;
}

TEST_F(TorchReference, FitnessOverABaselineItDoesNotHaveIsAClearError) {
  eval::evaluator_options o = fast_options();
  o.torch_baselines = true;
  o.fitness = "baseline";
  auto e = eval::evaluator::create(op_, "fp32", o, machine_profile());
  ASSERT_FALSE(e.has_value());
  EXPECT_NE(e.error().message.find("ts_swiglu.yaml"), std::string::npos) << e.error().message;
  EXPECT_NE(e.error().message.find("no 'baselines.cpu'"), std::string::npos) << e.error().message;
}

}  // namespace
}  // namespace kevolve::testing
