// The hip backend without an AMD GPU: resources from the compiler's remarks
// (parsed from fixed text, and real numbers from real compiles), the LDS and
// VGPR limits as compile_failed with the reason, the source policy and the
// import checks, and the evaluator's compile_only verdict (never a speedup).
// With an NVIDIA GPU: the HIP-on-CUDA path tells a wrong kernel from a right
// one and exposes the 32-lane wave honestly.
#include <filesystem>

#include <gtest/gtest.h>

#include "common/fs.h"
#include "common/paths.h"
#include "common/subprocess.h"
#include "eval/backends/cuda_backend.h"
#include "eval/backends/cuda_probe.h"
#include "eval/backends/hip_backend.h"
#include "eval/backends/hip_probe.h"
#include "eval/evaluator.h"
#include "spec/operator_loader.h"
#include "support/test_env.h"

namespace kevolve::testing {
namespace {

using eval::status;

std::string no_hipcc() {
  auto r = run_subprocess({eval::hipcc_path(), "--offload-arch=gfx90a", "--version"}, timeout_options(std::chrono::seconds(30)));
  return r && r->ok() ? "" : "no hipcc: " + eval::hipcc_path() + " (scripts/install-deps.sh installs it)";
}

eval::hip_backend& backend() {
  static eval::hip_backend b(cache_root() / "compile" / "hip-backend-tests", std::chrono::seconds(300), {"gfx90a", "gfx940"});
  return b;
}

std::string kernel_file(const std::string& name) {
  auto s = read_file(test_data() / "kernels" / "hip" / name);
  EXPECT_TRUE(s.has_value()) << name;
  return s ? *s : "";
}

TEST(HipRemarks, ParsedPerKernelAndArch) {
  const std::string text =
      "k.hip:2:1: remark: Function Name: _Z3addPKfPfi [-Rpass-analysis=kernel-resource-usage]\n"
      "k.hip:2:1: remark:     SGPRs: 11 [-Rpass-analysis=kernel-resource-usage]\n"
      "k.hip:2:1: remark:     VGPRs: 6 [-Rpass-analysis=kernel-resource-usage]\n"
      "k.hip:2:1: remark:     AGPRs: 16 [-Rpass-analysis=kernel-resource-usage]\n"
      "k.hip:2:1: remark:     ScratchSize [bytes/lane]: 24 [-Rpass-analysis=kernel-resource-usage]\n"
      "k.hip:2:1: remark:     Occupancy [waves/SIMD]: 8 [-Rpass-analysis=kernel-resource-usage]\n"
      "k.hip:2:1: remark:     SGPRs Spill: 2 [-Rpass-analysis=kernel-resource-usage]\n"
      "k.hip:2:1: remark:     VGPRs Spill: 3 [-Rpass-analysis=kernel-resource-usage]\n"
      "k.hip:2:1: remark:     LDS Size [bytes/block]: 4096 [-Rpass-analysis=kernel-resource-usage]\n"
      "k.hip:2:1: remark: Function Name: _Z3addPKfPfi [-Rpass-analysis=kernel-resource-usage]\n"
      "k.hip:2:1: remark:     SGPRs: 14 [-Rpass-analysis=kernel-resource-usage]\n"
      "k.hip:2:1: remark:     VGPRs: 5 [-Rpass-analysis=kernel-resource-usage]\n";
  const auto ks = eval::parse_hip_resource_remarks(text, {"gfx90a", "gfx940"});
  ASSERT_EQ(ks.size(), 2u);
  EXPECT_EQ(ks[0].name, "_Z3addPKfPfi");
  EXPECT_EQ(ks[0].target, "gfx90a");
  EXPECT_EQ(ks[0].sgprs, 11);
  EXPECT_EQ(ks[0].registers, 6);
  EXPECT_EQ(ks[0].agprs, 16);
  EXPECT_EQ(ks[0].stack_bytes, 24);
  EXPECT_EQ(ks[0].occupancy, 8);
  EXPECT_EQ(ks[0].sgpr_spills, 2);
  EXPECT_EQ(ks[0].vgpr_spills, 3);
  EXPECT_EQ(ks[0].shared_bytes, 4096);
  EXPECT_EQ(ks[1].target, "gfx940");
  EXPECT_EQ(ks[1].sgprs, 14);
  EXPECT_EQ(ks[1].registers, 5);
}

TEST(HipLimits, LdsOverTheLimitIsCompileFailedWithTheReason) {
  if (const std::string why = no_hipcc(); !why.empty()) GTEST_SKIP() << why;
  auto c = eval::check_statically(backend(), kernel_file("lds_over_limit.hip"), {});
  ASSERT_TRUE(c.has_value()) << c.error().message;
  EXPECT_EQ(eval::to_string(c->result), std::string("compile_failed"));
  EXPECT_NE(c->reason.find("exceeds the LDS limit"), std::string::npos) << c->reason;
  EXPECT_NE(c->reason.find("131072"), std::string::npos) << c->reason;
  EXPECT_NE(c->reason.find("65536"), std::string::npos) << c->reason;
}

TEST(HipLimits, VgprSpillsAreCompileFailedWithTheReason) {
  if (const std::string why = no_hipcc(); !why.empty()) GTEST_SKIP() << why;
  auto c = eval::check_statically(backend(), kernel_file("vgpr_spill.hip"), {});
  ASSERT_TRUE(c.has_value()) << c.error().message;
  EXPECT_EQ(eval::to_string(c->result), std::string("compile_failed"));
  EXPECT_NE(c->reason.find("exceeds the VGPR limit on gfx90a"), std::string::npos) << c->reason;
  ASSERT_FALSE(c->kernel.report.kernels.empty());
  EXPECT_EQ(c->kernel.report.kernels.front().registers, 128);  // the cap under __launch_bounds__(1024)
  EXPECT_GT(c->kernel.report.kernels.front().vgpr_spills, 0);
  EXPECT_GT(c->kernel.report.kernels.front().stack_bytes, 0);
}

TEST(HipPolicy, RefusesWhatAKernelMayNotDo) {
  const std::string head = "#include <hip/hip_runtime.h>\n#include \"kevolve/abi.h\"\n__global__ void k(float* p) { p[0] = 1; }\n";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"hipDeviceSynchronize();", "device synchronization"},
      {"hipLaunchKernelGGL(k, dim3(1), dim3(1), 0, 0, (float*)a->outputs[0].data);", "launch on the default stream"},
      {"k<<<1, 1>>>((float*)a->outputs[0].data);", "launch on the default stream"},
      {"void* p; hipMalloc(&p, 16);", "memory allocation"},
      {"hipStream_t t; hipStreamCreate(&t);", "stream other than the given one"},
      {"hipEvent_t e; hipEventCreate(&e);", "timer"},
  };
  for (const auto& [body, rule] : cases) {
    const auto v = eval::scan_hip_source(head + "extern \"C\" int kevolve_kernel(const kv_args* a, hipStream_t s) { " +
                                             body + " return 0; }\n",
                                         {});
    EXPECT_TRUE(std::any_of(v.begin(), v.end(), [&](const auto& x) { return x.rule == rule; })) << body << " -> " << rule;
  }
  const auto g = eval::scan_hip_source("#include <hip/hip_runtime.h>\n__device__ float cache[64];\n", {});
  EXPECT_TRUE(std::any_of(g.begin(), g.end(), [](const auto& x) { return x.rule == "mutable device global"; }));
  EXPECT_FALSE(eval::scan_hip_source("#include <rocblas/rocblas.h>\n", {}).empty());
  EXPECT_FALSE(eval::scan_hip_source("#include <hipcub/hipcub.hpp>\n", {}).empty());
}

TEST(HipResources, MfmaGemmUsesAccumulationRegistersAndTheFallbackDoesNot) {
  if (const std::string why = no_hipcc(); !why.empty()) GTEST_SKIP() << why;
  auto tmpl = read_file(data_root() / "knowledge" / "templates" / "hip" / "gemm_bias_relu.hip.tmpl");
  auto inc = read_file(data_root() / "knowledge" / "templates" / "hip" / "_hip.inc");
  ASSERT_TRUE(tmpl && inc);
  for (int mfma : {1, 0}) {
    std::string src = *tmpl;
    src.replace(src.find("{{include:_hip.inc}}"), 20, *inc);
    src = "#define KVP_MFMA " + std::to_string(mfma) + "\n#define KVP_BK 16\n" + src;
    auto c = eval::check_statically(backend(), src, {});
    ASSERT_TRUE(c.has_value()) << c.error().message;
    ASSERT_EQ(eval::to_string(c->result), std::string("ok")) << c->reason << c->kernel.report.diagnostics.substr(0, 2000);
    for (const auto& k : c->kernel.report.kernels) {
      if (mfma) EXPECT_GT(k.agprs, 0) << k.target << ": MFMA accumulates in AGPRs";
      else EXPECT_EQ(k.agprs, 0) << k.target;
      EXPECT_GT(k.shared_bytes, 0) << k.target << ": LDS tiles";
    }
  }
}

TEST(HipEvaluator, WithoutAnAmdGpuTheVerdictIsCompileOnlyAndNeverASpeedup) {
  if (const std::string why = no_hipcc(); !why.empty()) GTEST_SKIP() << why;
  if (eval::hip_cannot_run_here().empty()) GTEST_SKIP() << "this node has an AMD GPU: the full protocol runs";
  auto hw = eval::hip_hardware_profile(false);
  ASSERT_TRUE(hw.has_value()) << hw.error().message;
  auto op = spec::load_operator(spec::default_operator_dir() / "gemm_bias_relu.yaml");
  ASSERT_TRUE(op.has_value()) << op.error().message;
  auto ev = eval::evaluator::create(*op, "fp32", fast_options(), *hw);
  ASSERT_TRUE(ev.has_value()) << ev.error().message;
  auto src = read_file(data_root() / "config" / "operators" / "gemm_bias_relu" / "hip_baseline.hip");
  ASSERT_TRUE(src.has_value());
  auto v = (*ev)->evaluate(*src);
  ASSERT_TRUE(v.has_value()) << v.error().message;
  EXPECT_EQ(eval::to_string(v->result), std::string("compile_only"));
  EXPECT_EQ(v->fitness, 0.0);
  EXPECT_TRUE(v->shapes.empty()) << "nothing may be measured without the device";
  EXPECT_NE(v->reason.find("no AMD GPU"), std::string::npos) << v->reason;
  EXPECT_EQ(v->compile.target, "gfx90a,gfx940");
  // Compile failures stay compile_failed: compile_only means "compiled".
  auto bad = (*ev)->evaluate(kernel_file("lds_over_limit.hip"));
  ASSERT_TRUE(bad.has_value());
  EXPECT_EQ(eval::to_string(bad->result), std::string("compile_failed"));
}

// The mode the hip_on_cuda backend runs in, on the CPU backend: every shape
// verified (a wrong kernel still fails), nothing timed, no fitness.
TEST(VerifyOnly, ChecksEveryShapeAndTimesNone) {
  auto op = spec::load_operator(spec::default_operator_dir() / "softmax.yaml");
  ASSERT_TRUE(op.has_value());
  auto o = fast_options();
  o.verify_only = true;
  auto ev = eval::evaluator::create(*op, "fp32", o, machine_profile());
  ASSERT_TRUE(ev.has_value()) << ev.error().message;
  auto good = read_file(data_root() / "knowledge" / "examples" / "cpu" / "softmax.cpp");
  ASSERT_TRUE(good.has_value());
  auto v = (*ev)->evaluate(*good);
  ASSERT_TRUE(v.has_value()) << v.error().message;
  EXPECT_EQ(eval::to_string(v->result), std::string("ok")) << v->reason;
  EXPECT_EQ(v->fitness, 0.0);
  ASSERT_EQ(v->shapes.size(), op->shapes.size() + op->holdout_shapes.size());
  for (const auto& s : v->shapes) {
    EXPECT_EQ(s.candidate.runs, 0) << s.shape;
    EXPECT_GT(s.trials, 0) << s.shape;
  }
  std::string wrong = *good;
  const std::string sig = "extern \"C\" int kevolve_kernel(const kv_args* a) {";
  ASSERT_NE(wrong.find(sig), std::string::npos);
  wrong.replace(wrong.find(sig), sig.size(), sig + " if (a->outputs[0].dims[0] > 0) return 0;");
  auto w = (*ev)->evaluate(wrong);
  ASSERT_TRUE(w.has_value());
  EXPECT_EQ(eval::to_string(w->result), std::string("wrong_result"));
}

// ---- an NVIDIA GPU: the HIP-on-CUDA path ---------------------------------------

TEST(HipOnCudaDevice, WaveSizeIsCudasAndWrongKernelsFail) {
  auto hw = eval::cuda_hardware_profile(false);
  if (!hw) GTEST_SKIP() << "no NVIDIA GPU: " << hw.error().message << " (bench/hip_cross_check.sh runs this on one)";
  hw->backend = "hip_on_cuda";
  auto op = spec::load_operator(spec::default_operator_dir() / "softmax.yaml");
  ASSERT_TRUE(op.has_value());
  auto o = fast_options();
  o.call_timeout = std::chrono::milliseconds(10000);
  auto ev = eval::evaluator::create(*op, "fp32", o, *hw);
  ASSERT_TRUE(ev.has_value()) << ev.error().message;
  auto v = (*ev)->evaluate(kernel_file("wave64_hardcoded_softmax.hip"));
  ASSERT_TRUE(v.has_value()) << v.error().message;
  EXPECT_EQ(eval::to_string(v->result), std::string("wrong_result")) << v->reason;
}

}  // namespace
}  // namespace kevolve::testing
