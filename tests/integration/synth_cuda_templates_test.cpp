// The builtin synthesizer's CUDA templates (knowledge/templates/cuda/).
// Without a GPU (CI): every template serving a starter operator compiles with
// nvcc for sm_90a (the H200's target, wgmma included) at its defaults and at sampled parameter points, passes the
// source policy and the import/PTX checks, and spills nothing at its defaults;
// every cheating CUDA kernel of the trust tests compiles. With a GPU (the
// device machine; bench/README.md gives the command) the defaults of every
// template also pass the real evaluator on the cuda backend, held-out shapes
// included, in every dtype variant.
#include <cstdlib>
#include <filesystem>
#include <future>
#include <iostream>

#include <gtest/gtest.h>

#include "common/paths.h"
#include "common/rng.h"
#include "common/subprocess.h"
#include "eval/backends/cuda_backend.h"
#include "eval/backends/cuda_probe.h"
#include "support/test_env.h"
#include "synth/builtin_synthesizer.h"

namespace kevolve::testing {
namespace {

using eval::status;
using synth::builtin_synthesizer;

builtin_synthesizer& synthesizer() {
  static std::unique_ptr<builtin_synthesizer> s = [] {
    auto r = builtin_synthesizer::create();
    EXPECT_TRUE(r.has_value()) << (r ? "" : r.error().message);
    return r ? std::move(*r) : nullptr;
  }();
  return *s;
}

std::string no_nvcc() {
  auto r = run_subprocess({eval::nvcc_path(), "--version"}, timeout_options(std::chrono::seconds(20)));
  if (r && r->ok()) return "";
  return "no nvcc: " + eval::nvcc_path() + (r ? " failed" : " cannot run") + " (set KEVOLVE_NVCC)";
}

std::string no_gpu() {
  if (!std::filesystem::exists(eval::cuda_worker_executable()))
    return "no CUDA device: kevolve-cuda-worker was not built";
  auto r = run_subprocess({"nvidia-smi", "-L"}, timeout_options(std::chrono::seconds(20)));
  if (r && r->ok() && r->output.find("GPU 0") != std::string::npos) return "";
  return "no CUDA device (nvidia-smi -L found none); on a GPU node: bench/cuda_sweep.sh tests (bench/README.md)";
}

// Sampled parameter points per template beyond the defaults.
int sampled_points() {
  const char* e = std::getenv("KEVOLVE_CUDA_TEMPLATE_POINTS");
  return e ? std::atoi(e) : 1;
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

class CudaTemplates : public ::testing::TestWithParam<std::string> {};

TEST_P(CudaTemplates, CompileCleanlyAtDefaultsAndSampledPoints) {
  if (const std::string why = no_nvcc(); !why.empty()) GTEST_SKIP() << why;
  const spec::operator_spec op = starter(GetParam());
  builtin_synthesizer& s = synthesizer();
  const auto ts = s.serving(op, nullptr, "cuda");
  ASSERT_FALSE(ts.empty()) << "no cuda template serves " << op.name;
  std::vector<rendered> jobs;
  rng r(42);
  for (const auto* t : ts) {
    jobs.push_back({t->name + " defaults", s.render_with(*t, op, t->space.defaults(), "defaults"), true});
    for (int p = 0; p < sampled_points(); ++p) {
      const auto params = t->space.sample(r);
      jobs.push_back({t->name + " " + params.dump(), s.render_with(*t, op, params, "sampled"), false});
    }
  }
  // Two compiles at a time (CI has two cores); one backend per thread.
  auto compile = [&](size_t first) {
    eval::cuda_backend b(cache_root() / "compile" / "cuda-template-tests", std::chrono::seconds(300), "sm_90a");
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
    ASSERT_FALSE(c->kernel.report.kernels.empty()) << op.name << " " << j.what << ": no ptxas report";
    EXPECT_EQ(c->kernel.report.target, "sm_90a");
    for (const auto& k : c->kernel.report.kernels) {
      EXPECT_GT(k.registers, 0) << op.name << " " << j.what << " " << k.name;
      if (j.defaults) {
        EXPECT_EQ(k.spill_store_bytes, 0) << op.name << " " << j.what << " " << k.name << " spills";
      }
    }
    std::cout << "[cuda-template] " << op.name << " " << j.what << ": " << c->kernel.report.kernels.size()
              << " kernels, " << c->kernel.report.seconds << " s" << (c->kernel.report.cached ? " (cached)" : "")
              << "\n";
  }
}

// Every starter operator has a cuda template and a cuda baseline.
INSTANTIATE_TEST_SUITE_P(Starter, CudaTemplates,
                         ::testing::Values("softmax", "layernorm", "rmsnorm", "bias_gelu", "ts_silu", "swiglu",
                                           "embedding_bag_sum", "gemm_bias_relu", "conv1d", "bucketize",
                                           "feature_hash", "jagged_to_padded_dense", "sequence_truncate",
                                           "dot_interaction", "ts_sequence_tanh_softmax"),
                         [](const ::testing::TestParamInfo<std::string>& p) { return p.param; });

// The 16-bit points of issue 21 (bench/cuda_16bit.sh, bench/README.md): the
// row templates' automatic group at each 'per' with and without a persistent
// grid, a group per row too wide for a 16-bit row, and the elementwise
// template with and without its fast math and grid stride: each compiles
// for sm_90, passes the static checks and spills nothing.
TEST(CudaTemplates16Bit, MeasuredPointsCompileWithoutSpills) {
  if (const std::string why = no_nvcc(); !why.empty()) GTEST_SKIP() << why;
  builtin_synthesizer& s = synthesizer();
  const std::vector<std::pair<std::string, std::vector<std::string>>> points = {
      {"softmax", {R"({"per": 2})", R"({"per": 8, "persistent": 1})", R"({"group": 1024})"}},
      {"layernorm", {R"({"per": 4})", R"({"per": 4, "persistent": 1})", R"({"per": 8})"}},
      {"rmsnorm", {R"({"per": 2})", R"({"per": 4, "persistent": 1})"}},
      {"bias_gelu", {R"({"fast_math": 1, "grid_stride": 0})", R"({"fast_math": 0, "grid_stride": 1, "unroll": 4})"}},
      {"swiglu", {R"({"fast_math": 1, "grid_stride": 0})"}}};
  eval::cuda_backend b(cache_root() / "compile" / "cuda-template-tests", std::chrono::seconds(300), "sm_90");
  for (const auto& [name, list] : points) {
    const spec::operator_spec op = starter(name);
    const auto ts = s.serving(op, nullptr, "cuda");
    ASSERT_FALSE(ts.empty()) << name;
    for (const auto& p : list) {
      auto params = ts[0]->space.defaults();
      const auto chosen = nlohmann::json::parse(p);
      for (auto it = chosen.begin(); it != chosen.end(); ++it) params[it.key()] = it.value();
      const auto r = s.render_with(*ts[0], op, params, "sampled");
      ASSERT_TRUE(r.ok) << name << " " << p << ": " << r.error;
      auto c = eval::check_statically(b, r.code, op.allowed_libraries);
      ASSERT_TRUE(c.has_value()) << name << " " << p << ": " << c.error().message;
      EXPECT_EQ(eval::to_string(c->result), std::string("ok"))
          << name << " " << p << ": " << c->reason << "\n" << c->kernel.report.diagnostics.substr(0, 3000);
      for (const auto& k : c->kernel.report.kernels)
        EXPECT_EQ(k.spill_store_bytes, 0) << name << " " << p << " " << k.name << " spills";
    }
  }
}

TEST(CudaCheats, EveryCheatingKernelCompiles) {
  if (const std::string why = no_nvcc(); !why.empty()) GTEST_SKIP() << why;
  eval::cuda_compiler c(cache_root() / "compile" / "cuda-template-tests", std::chrono::seconds(300), "sm_90a");
  int n = 0;
  for (const auto& f : std::filesystem::directory_iterator(test_data() / "kernels" / "cheats" / "cuda")) {
    if (f.path().extension() != ".cu") continue;
    ++n;
    auto src = read_file(f.path());
    ASSERT_TRUE(src.has_value());
    // The library-fallback cheat links cuBLAS, as a cheat would.
    const bool cublas = src->find("cublas") != std::string::npos;
    auto k = c.compile(*src, cublas ? std::vector<std::string>{"cublas"} : std::vector<std::string>{},
                       f.path().filename().string());
    ASSERT_TRUE(k.has_value()) << f.path() << ": " << k.error().message;
    EXPECT_TRUE(k->ok) << f.path() << " does not compile, so its guard test proves nothing:\n"
                       << k->report.diagnostics.substr(0, 2000);
  }
  EXPECT_GE(n, 10) << "cheating CUDA kernels expected in tests/data/kernels/cheats/cuda";
}

// ---- a GPU: the defaults pass the real evaluator --------------------------------

class CudaTemplatesOnGpu : public ::testing::TestWithParam<std::string> {};

TEST_P(CudaTemplatesOnGpu, DefaultsPassTheEvaluatorInEveryVariant) {
  if (std::string why = no_nvcc(); !why.empty()) GTEST_SKIP() << why;
  if (std::string why = no_gpu(); !why.empty()) GTEST_SKIP() << why;
  auto hw = eval::cuda_hardware_profile(false);
  ASSERT_TRUE(hw.has_value()) << hw.error().message;
  const spec::operator_spec op = starter(GetParam());
  builtin_synthesizer& s = synthesizer();
  auto o = fast_options();
  o.threads = 16;  // the CPU-time cross-check allows the worker threads x the timed time
  o.call_timeout = std::chrono::milliseconds(10000);
  o.rotation_bytes = 64.0 * (1 << 20);
  o.memory_limit_bytes = uint64_t(16) << 30;
  for (const auto& var : op.variants) {
    auto ev = eval::evaluator::create(op, var.name, o, *hw);
    ASSERT_TRUE(ev.has_value()) << ev.error().message;
    for (const auto* t : s.serving(op, &var, "cuda")) {
      const auto d = s.render_with(*t, op, t->space.defaults(), "defaults");
      ASSERT_TRUE(d.ok) << d.error;
      auto v = (*ev)->evaluate(d.code);
      ASSERT_TRUE(v.has_value()) << v.error().message;
      EXPECT_EQ(eval::to_string(v->result), std::string("ok"))
          << op.name << "/" << var.name << " " << t->name << ": " << v->reason;
      std::cout << "[cuda-template-gpu] " << op.name << " " << var.name << " " << t->name << " "
                << eval::to_string(v->result) << " fitness " << v->fitness << "\n";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Starter, CudaTemplatesOnGpu,
                         ::testing::Values("softmax", "layernorm", "rmsnorm", "bias_gelu", "embedding_bag_sum",
                                           "gemm_bias_relu", "conv1d", "bucketize", "feature_hash",
                                           "jagged_to_padded_dense", "sequence_truncate", "dot_interaction",
                                           "ts_sequence_tanh_softmax"),
                         [](const ::testing::TestParamInfo<std::string>& p) { return p.param; });

}  // namespace
}  // namespace kevolve::testing
