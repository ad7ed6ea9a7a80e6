// The builtin synthesizer's HIP templates (knowledge/templates/hip/).
// Without an AMD GPU (CI and the device machine alike):
//  - every template serving a starter operator compiles with hipcc for
//    gfx90a and gfx940 at its defaults and at a sampled point, passes the
//    source policy and the import checks, and reports real resources
//    (VGPRs, SGPRs, occupancy) for both archs, with no VGPR spill at its
//    defaults;
//  - the defaults compile with nvcc through kevolve's HIP-on-CUDA header.
// With an NVIDIA GPU (bench/hip_cross_check.sh on the device machine), the
// same HIP sources, defaults and sampled variants, pass the evaluator on the
// NVIDIA GPU (backend hip_on_cuda: verified at every shape, never timed):
// correctness on another device, not an AMD performance figure.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>
#include <iostream>

#include <gtest/gtest.h>

#include "common/paths.h"
#include "common/rng.h"
#include "common/subprocess.h"
#include "eval/backends/cuda_backend.h"
#include "eval/backends/cuda_probe.h"
#include "eval/backends/hip_backend.h"
#include "eval/evaluator.h"
#include "support/test_env.h"
#include "synth/builtin_synthesizer.h"

namespace kevolve::testing {
namespace {

using synth::builtin_synthesizer;

builtin_synthesizer& synthesizer() {
  static std::unique_ptr<builtin_synthesizer> s = [] {
    auto r = builtin_synthesizer::create();
    EXPECT_TRUE(r.has_value()) << (r ? "" : r.error().message);
    return r ? std::move(*r) : nullptr;
  }();
  return *s;
}

bool tool_runs(const std::vector<std::string>& argv) {
  auto r = run_subprocess(argv, timeout_options(std::chrono::seconds(30)));
  return r && r->ok();
}
std::string no_hipcc() {
  return tool_runs({eval::hipcc_path(), "--offload-arch=gfx90a", "--version"})
             ? ""
             : "no hipcc: " + eval::hipcc_path() + " (scripts/install-deps.sh installs it; or set KEVOLVE_HIPCC)";
}
std::string no_nvcc() {
  return tool_runs({eval::nvcc_path(), "--version"}) ? "" : "no nvcc: " + eval::nvcc_path() + " (set KEVOLVE_NVCC)";
}
std::string no_nvidia_gpu() {
  if (!std::filesystem::exists(eval::cuda_worker_executable())) return "no CUDA device: kevolve-cuda-worker was not built";
  auto r = run_subprocess({"nvidia-smi", "-L"}, timeout_options(std::chrono::seconds(20)));
  if (r && r->ok() && r->output.find("GPU 0") != std::string::npos) return "";
  return "no NVIDIA GPU (nvidia-smi -L found none); on a GPU node: bench/hip_cross_check.sh";
}

spec::operator_spec starter(const std::string& name) {
  const auto file = name.rfind("ts_", 0) == 0 ? test_data() / "operators" / (name + ".yaml")
                                               : spec::default_operator_dir() / (name + ".yaml");
  auto op = spec::load_operator(file);
  EXPECT_TRUE(op.has_value()) << (op ? "" : op.error().message);
  return op ? *op : spec::operator_spec{};
}

struct rendered {
  std::string what;
  synth::synthesis_result r;
  bool defaults = false;
};

// Defaults and `points` sampled parameter points of every hip template serving `op`.
std::vector<rendered> render_all(const spec::operator_spec& op, const spec::variant* v, int points) {
  builtin_synthesizer& s = synthesizer();
  std::vector<rendered> jobs;
  rng r(42);
  for (const auto* t : s.serving(op, v, "hip")) {
    jobs.push_back({t->name + " defaults", s.render_with(*t, op, t->space.defaults(), "defaults"), true});
    for (int p = 0; p < points; ++p) {
      const auto params = t->space.sample(r);
      jobs.push_back({t->name + " " + params.dump(), s.render_with(*t, op, params, "sampled"), false});
    }
  }
  return jobs;
}

const std::vector<std::string> kArchs = {"gfx90a", "gfx940"};

class HipTemplates : public ::testing::TestWithParam<std::string> {};

TEST_P(HipTemplates, CompileForCdnaArchsWithResourcesAndThroughTheCudaHeader) {
  if (const std::string why = no_hipcc(); !why.empty()) GTEST_SKIP() << why;
  const spec::operator_spec op = starter(GetParam());
  const auto jobs = render_all(op, nullptr, 1);
  ASSERT_FALSE(jobs.empty()) << "no hip template serves " << op.name;
  // Two compiles at a time (CI has two cores); the cache makes reruns instant.
  auto compile = [&](size_t first) {
    eval::hip_backend b(cache_root() / "compile" / "hip-template-tests", std::chrono::seconds(300), kArchs);
    std::vector<std::pair<size_t, expected<eval::static_check>>> out;
    for (size_t i = first; i < jobs.size(); i += 2)
      out.emplace_back(i, jobs[i].r.ok ? eval::check_statically(b, jobs[i].r.code, op.allowed_libraries)
                                       : expected<eval::static_check>(make_error(errc::invalid_input, jobs[i].r.error)));
    return out;
  };
  auto other = std::async(std::launch::async, compile, size_t(1));
  auto results = compile(0);
  for (auto& x : other.get()) results.push_back(std::move(x));
  for (auto& [i, c] : results) {
    const rendered& j = jobs[i];
    ASSERT_TRUE(c.has_value()) << op.name << " " << j.what << ": " << c.error().message;
    EXPECT_EQ(eval::to_string(c->result), std::string("ok"))
        << op.name << " " << j.what << ": " << c->reason << "\n" << c->kernel.report.diagnostics.substr(0, 3000);
    EXPECT_EQ(c->kernel.report.target, "gfx90a,gfx940");
    const auto& ks = c->kernel.report.kernels;
    ASSERT_FALSE(ks.empty()) << op.name << " " << j.what << ": no resource remarks";
    for (const auto& arch : kArchs)
      EXPECT_TRUE(std::any_of(ks.begin(), ks.end(), [&](const auto& k) { return k.target == arch; }))
          << op.name << " " << j.what << ": no resources for " << arch;
    for (const auto& k : ks) {
      EXPECT_GT(k.registers, 0) << op.name << " " << j.what << " " << k.target << " " << k.name << " VGPRs";
      EXPECT_GT(k.sgprs, 0) << op.name << " " << j.what << " " << k.target << " " << k.name << " SGPRs";
      EXPECT_GE(k.occupancy, 1) << op.name << " " << j.what << " " << k.target << " " << k.name << " occupancy";
      EXPECT_LE(k.occupancy, 10) << op.name << " " << j.what << " " << k.target << " " << k.name << " occupancy";
      if (j.defaults) {
        EXPECT_EQ(k.vgpr_spills, 0) << op.name << " " << j.what << " " << k.target << " " << k.name;
      }
    }
    std::cout << "[hip-template] " << op.name << " " << j.what << ": " << ks.size() << " kernel x arch, e.g. "
              << ks.front().target << " " << ks.front().registers << " VGPRs " << ks.front().agprs << " AGPRs "
              << ks.front().sgprs << " SGPRs, LDS " << ks.front().shared_bytes << " B, occupancy "
              << ks.front().occupancy << ", " << c->kernel.report.seconds << " s"
              << (c->kernel.report.cached ? " (cached)" : "") << "\n";
  }
  // The same sources through the HIP-on-CUDA header (compile only here).
  if (const std::string why = no_nvcc(); !why.empty()) {
    std::cout << "[hip-template] " << op.name << ": not compiled through the HIP-on-CUDA header: " << why << "\n";
    return;
  }
  eval::cuda_backend nv(cache_root() / "compile" / "hip-on-cuda-tests", std::chrono::seconds(300), "sm_90", true);
  for (const auto& j : jobs) {
    if (!j.defaults) continue;
    auto c = eval::check_statically(nv, j.r.code, op.allowed_libraries);
    ASSERT_TRUE(c.has_value()) << c.error().message;
    EXPECT_EQ(eval::to_string(c->result), std::string("ok"))
        << op.name << " " << j.what << " through the HIP-on-CUDA header: " << c->reason << "\n"
        << c->kernel.report.diagnostics.substr(0, 3000);
  }
}

INSTANTIATE_TEST_SUITE_P(Starter, HipTemplates,
                         ::testing::Values("softmax", "layernorm", "rmsnorm", "bias_gelu", "ts_silu",
                                           "embedding_bag_sum", "gemm_bias_relu", "conv1d", "bucketize",
                                           "feature_hash", "jagged_to_padded_dense", "sequence_truncate",
                                           "dot_interaction"),
                         [](const ::testing::TestParamInfo<std::string>& p) { return p.param; });

// ---- an NVIDIA GPU: the HIP sources verify there (hip_on_cuda) -------------------

// One line per checked kernel, appended to $KEVOLVE_HIP_CROSS_TABLE when set.
void record(const std::string& line) {
  std::cout << "[hip-cross] " << line << "\n";
  if (const char* f = std::getenv("KEVOLVE_HIP_CROSS_TABLE"); f && *f) std::ofstream(f, std::ios::app) << line << "\n";
}

class HipOnCuda : public ::testing::TestWithParam<std::string> {};

TEST_P(HipOnCuda, DefaultsAndVariantsVerifyOnAnNvidiaGpu) {
  if (std::string why = no_nvcc(); !why.empty()) GTEST_SKIP() << why;
  if (std::string why = no_nvidia_gpu(); !why.empty()) GTEST_SKIP() << why;
  auto hw = eval::cuda_hardware_profile(false);
  ASSERT_TRUE(hw.has_value()) << hw.error().message;
  hw->backend = "hip_on_cuda";
  const spec::operator_spec op = starter(GetParam());
  auto o = fast_options();
  o.threads = 16;
  o.call_timeout = std::chrono::milliseconds(10000);
  o.memory_limit_bytes = uint64_t(16) << 30;
  const char* pts = std::getenv("KEVOLVE_HIP_CROSS_POINTS");
  const int points = pts ? std::atoi(pts) : 2;
  for (const auto& var : op.variants) {
    auto ev = eval::evaluator::create(op, var.name, o, *hw);
    ASSERT_TRUE(ev.has_value()) << ev.error().message;
    for (const auto& j : render_all(op, &var, points)) {
      ASSERT_TRUE(j.r.ok) << j.r.error;
      auto v = (*ev)->evaluate(j.r.code);
      ASSERT_TRUE(v.has_value()) << v.error().message;
      EXPECT_EQ(eval::to_string(v->result), std::string("ok")) << op.name << "/" << var.name << " " << j.what << ": " << v->reason;
      EXPECT_EQ(v->fitness, 0.0) << "a correctness check on another device must not claim a speedup";
      double worst = 0;
      for (const auto& s : v->shapes) worst = std::max(worst, s.max_error_ratio);
      record(op.name + "\t" + var.name + "\t" + j.what + "\t" + eval::to_string(v->result) + "\t" +
             std::to_string(v->shapes.size()) + "\t" + std::to_string(worst) + "\t" + hw->model + "\t" +
             (v->ok() ? v->reason : v->reason.substr(0, 200)));
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Starter, HipOnCuda,
                         ::testing::Values("softmax", "layernorm", "rmsnorm", "bias_gelu", "embedding_bag_sum",
                                           "gemm_bias_relu", "conv1d", "bucketize", "feature_hash",
                                           "jagged_to_padded_dense", "sequence_truncate", "dot_interaction"),
                         [](const ::testing::TestParamInfo<std::string>& p) { return p.param; });

}  // namespace
}  // namespace kevolve::testing
