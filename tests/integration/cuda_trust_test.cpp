// The cuda backend against TRUST.md. Static checks (source policy, nvcc
// compile, imports, PTX) need nvcc only and run in CI; the runtime checks run
// cheating kernels through the real evaluator on a GPU and skip without one.
// On the device machine: bench/cuda_check.sh runs them all.
#include <gtest/gtest.h>

#include <filesystem>

#include "common/paths.h"
#include "common/subprocess.h"
#include "eval/backends/cuda_backend.h"
#include "eval/backends/cuda_probe.h"
#include "support/test_env.h"

namespace kevolve::testing {
namespace {

using eval::status;

bool have_nvcc(std::string& why) {
  auto r = run_subprocess({eval::nvcc_path(), "--version"}, timeout_options(std::chrono::seconds(20)));
  if (r && r->ok()) return true;
  why = "no nvcc: " + eval::nvcc_path() + (r ? " failed" : " cannot run");
  return false;
}

bool have_gpu(std::string& why) {
  if (!std::filesystem::exists(eval::cuda_worker_executable())) {
    why = "no CUDA device: kevolve-cuda-worker was not built (no CUDA toolkit)";
    return false;
  }
  auto r = run_subprocess({"nvidia-smi", "-L"}, timeout_options(std::chrono::seconds(20)));
  if (r && r->ok() && r->output.find("GPU 0") != std::string::npos) return true;
  why = "no CUDA device: nvidia-smi -L " + std::string(r ? "found none" : "cannot run");
  return false;
}

std::string example(const std::string& name) {
  auto text = read_file(data_root() / "knowledge" / "examples" / "cuda" / name);
  EXPECT_TRUE(text.has_value());
  return text ? *text : "";
}

// ---- static: nvcc, no GPU ----------------------------------------------------

class CudaStatic : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    if (!have_nvcc(why)) GTEST_SKIP() << why;
    backend_ = std::make_unique<eval::cuda_backend>(cache_root() / "compile" / "cuda-tests", std::chrono::seconds(120),
                                                    "sm_90");
  }
  eval::static_check check(const std::string& source) {
    auto c = eval::check_statically(*backend_, source, {});
    EXPECT_TRUE(c.has_value()) << (c ? "" : c.error().message);
    return c ? *c : eval::static_check{};
  }
  void expect(const std::string& kernel, status want, const std::string& reason_part) {
    const auto c = check(kernel_source("cheats/cuda/" + kernel));
    EXPECT_EQ(eval::to_string(c.result), std::string(eval::to_string(want))) << kernel << ": " << c.reason;
    EXPECT_NE(c.reason.find(reason_part), std::string::npos) << kernel << ": reason was: " << c.reason;
  }
  std::unique_ptr<eval::cuda_backend> backend_;
};

TEST(CudaPtxas, ReportIsParsedPerEntry) {
  const std::string text =
      "ptxas info    : 0 bytes gmem\n"
      "ptxas info    : Compiling entry function '_Z4add1PKfPfl' for 'sm_90'\n"
      "ptxas info    : Function properties for _Z4add1PKfPfl\n"
      "    24 bytes stack frame, 8 bytes spill stores, 4 bytes spill loads\n"
      "ptxas info    : Used 10 registers, used 1 barriers, 4096 bytes smem, 368 bytes cmem[0]\n"
      "ptxas info    : Compiling entry function '_Z3twov' for 'sm_90'\n"
      "ptxas info    : Function properties for _Z3twov\n"
      "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
      "ptxas info    : Used 128 registers, used 0 barriers\n";
  const auto ks = eval::parse_ptxas_report(text);
  ASSERT_EQ(ks.size(), 2u);
  EXPECT_EQ(ks[0].name, "_Z4add1PKfPfl");
  EXPECT_EQ(ks[0].registers, 10);
  EXPECT_EQ(ks[0].barriers, 1);
  EXPECT_EQ(ks[0].shared_bytes, 4096);
  EXPECT_EQ(ks[0].stack_bytes, 24);
  EXPECT_EQ(ks[0].spill_store_bytes, 8);
  EXPECT_EQ(ks[0].spill_load_bytes, 4);
  EXPECT_EQ(ks[1].registers, 128);
  EXPECT_EQ(ks[1].shared_bytes, 0);
}

TEST(CudaSourcePolicy, LaunchesNeedTheGivenStream) {
  auto rules = [](const std::string& body) {
    std::string found;
    for (const auto& v : eval::scan_cuda_source(body, {})) found += v.rule + ";";
    return found;
  };
  EXPECT_EQ(rules("k<<<dim3(a, b), dim3(32, 8), 0, stream>>>(x);"), "");
  EXPECT_EQ(rules("k<<<grid, 256, smem, s>>>(x);"), "");
  EXPECT_EQ(rules("k<<<grid, 256>>>(x);"), "launch on the default stream;");
  EXPECT_EQ(rules("k<<<grid, 256, 0>>>(x);"), "launch on the default stream;");
  EXPECT_EQ(rules("k<<<grid, 256, 0, 0>>>(x);"), "launch on the default stream;");
  EXPECT_EQ(rules("// k<<<grid, 256>>>(x);\nasm volatile(\"membar.gl;\");"), "") << "comments are not code; inline PTX is allowed";
  EXPECT_NE(rules("k<<<g, b, 0, cudaStreamPerThread>>>(x);").find("stream other than the given one"), std::string::npos);
  // The driver: only the TMA descriptor's encoding, a host-side computation.
  EXPECT_EQ(rules("cuTensorMapEncodeTiled(&m, t, 2, p, dims, strides, box, es, i, s, l, f);"), "");
  EXPECT_EQ(rules("cuCtxSynchronize();"), "CUDA driver API;");
  EXPECT_EQ(rules("cuTensorMapEncodeTiledX(&m);"), "CUDA driver API;");
  EXPECT_EQ(rules("cuMemAlloc_v2(&p, 64);"), "CUDA driver API;");
}

TEST(CudaLibraryCheck, ImportsAndLibrariesFollowTheOperator) {
  eval::elf_report elf;
  elf.exports = {"kevolve_kernel"};
  elf.imports = {"__cudaLaunchKernel@libcudart.so.13", "cudaGetLastError@libcudart.so.13"};
  elf.needed = {"libcudart.so.13", "libstdc++.so.6", "libc.so.6"};
  elf.init_functions = 2;  // the usual one and nvcc's fatbinary registration
  elf.mutable_statics = {"__cudaFatCubinHandle (.bss)"};
  EXPECT_EQ(eval::check_cuda_library(elf, "", {}).result, status::ok) << eval::check_cuda_library(elf, "", {}).reason;

  auto with_cublas = elf;
  with_cublas.imports.push_back("cublasSgemm_v2@libcublas.so.13");
  with_cublas.needed.push_back("libcublas.so.13");
  const auto refused = eval::check_cuda_library(with_cublas, "", {});
  EXPECT_EQ(refused.result, status::suspicious);
  EXPECT_NE(refused.reason.find("library fallback"), std::string::npos) << refused.reason;
  EXPECT_EQ(eval::check_cuda_library(with_cublas, "", {"cublas"}).result, status::ok);

  // A TMA kernel links the driver for cuTensorMapEncodeTiled and nothing else of it.
  auto tma = elf;
  tma.imports.push_back("cuTensorMapEncodeTiled@libcuda.so.1");
  tma.needed.push_back("libcuda.so.1");
  EXPECT_EQ(eval::check_cuda_library(tma, "", {}).result, status::ok) << eval::check_cuda_library(tma, "", {}).reason;
  for (const char* driver : {"cuCtxSynchronize", "cuStreamSynchronize", "cuMemAlloc_v2", "cuGetProcAddress_v2",
                             "cuLaunchKernel"}) {
    auto more = tma;
    more.imports.push_back(std::string(driver) + "@libcuda.so.1");
    const auto c = eval::check_cuda_library(more, "", {});
    EXPECT_EQ(c.result, status::suspicious) << driver;
    EXPECT_NE(c.reason.find(driver), std::string::npos) << c.reason;
  }

  auto syncing = elf;
  syncing.imports.push_back("cudaStreamSynchronize@libcudart.so.13");
  EXPECT_NE(eval::check_cuda_library(syncing, "", {}).reason.find("cudaStreamSynchronize"), std::string::npos);

  const std::string ptx = ".version 9.0\n.target sm_90\n.global .align 4 .u32 seen;\n.visible .entry k()\n{\n ld.global.u32 %r1, [seen];\n}\n";
  EXPECT_NE(eval::check_cuda_library(elf, ptx, {}).reason.find("mutable device globals"), std::string::npos);
}

TEST_F(CudaStatic, ExamplesCompileForSm90WithAResourceReport) {
  for (const char* name : {"softmax.cu", "gemm_bias_relu.cu"}) {
    const auto c = check(example(name));
    EXPECT_EQ(c.result, status::ok) << name << ": " << c.reason << "\n" << c.kernel.report.diagnostics;
    EXPECT_EQ(c.kernel.report.target, "sm_90");
    ASSERT_FALSE(c.kernel.report.kernels.empty()) << name;
    for (const auto& k : c.kernel.report.kernels) {
      EXPECT_GT(k.registers, 0) << name << " " << k.name;
      EXPECT_EQ(k.spill_store_bytes, 0) << name << " " << k.name;
    }
    EXPECT_TRUE(std::filesystem::exists(eval::cuda_compiler::ptx_path(c.kernel))) << name;
  }
}
TEST_F(CudaStatic, SecondCompileIsCachedAndKeyedByTheToolchain) {
  const std::string src = kernel_source("cheats/cuda/honest_softmax.cu");
  const auto first = check(src);
  ASSERT_EQ(first.result, status::ok) << first.reason;
  const auto second = check(src);
  EXPECT_TRUE(second.kernel.report.cached);
  EXPECT_EQ(first.kernel.hash, second.kernel.hash);
  EXPECT_NE(backend_->toolchain_id().find("nvcc "), std::string::npos) << backend_->toolchain_id();
  EXPECT_NE(backend_->toolchain_id().find("sm_90"), std::string::npos) << backend_->toolchain_id();
  eval::cuda_backend other(cache_root() / "compile" / "cuda-tests", std::chrono::seconds(120), "sm_100");
  auto k = other.compile(src, {}, "kernel.cu");
  ASSERT_TRUE(k.has_value());
  EXPECT_NE(k->hash, first.kernel.hash) << "another target must be another cache entry";
}
TEST_F(CudaStatic, CompileErrorsCarryTheDiagnostics) {
  const auto c = check("#include \"kevolve/abi.h\"\nextern \"C\" int kevolve_kernel(const kv_args* a, void*) { return a->no_such_field; }\n");
  EXPECT_EQ(c.result, status::compile_failed);
  EXPECT_NE(c.kernel.report.diagnostics.find("no_such_field"), std::string::npos) << c.kernel.report.diagnostics;
}
TEST_F(CudaStatic, Row05SideStreamIsRefused) {
  expect("r05_side_stream.cu", status::suspicious, "stream other than the given one");
}
TEST_F(CudaStatic, Row05DefaultStreamLaunchIsRefused) {
  expect("r05_default_stream.cu", status::suspicious, "launch on the default stream");
}
TEST_F(CudaStatic, Row05DeviceSynchronizationIsRefused) {
  expect("r05_sync.cu", status::suspicious, "device synchronization");
}
TEST_F(CudaStatic, Row06SynchronizationPastTheScanIsCaughtInTheImports) {
  expect("r06_sync_pasted.cu", status::suspicious, "cudaDeviceSynchronize");
}
TEST_F(CudaStatic, Row06DriverSynchronizationPastTheScanIsCaughtInTheImports) {
  expect("r06_driver_sync_pasted.cu", status::suspicious, "cuCtxSynchronize");
}
TEST_F(CudaStatic, Row07OwnEventsAreRefused) { expect("r07_events.cu", status::suspicious, "timer"); }
TEST_F(CudaStatic, Row08HostStaticIsRefused) { expect("r08_host_static.cu", status::suspicious, "mutable static"); }
TEST_F(CudaStatic, Row08DeviceGlobalIsRefused) {
  // The host shadow of the __device__ variable gives it away first.
  expect("r08_device_global.cu", status::suspicious, "computed_once");
}
TEST_F(CudaStatic, Row09L2PersistenceIsRefused) {
  expect("r09_l2_persist.cu", status::suspicious, "L2 persistence control");
}
TEST_F(CudaStatic, Row09L2PersistencePastTheScanIsCaughtInTheImports) {
  expect("r09_l2_persist_pasted.cu", status::suspicious, "cudaDeviceSetLimit");
}
TEST_F(CudaStatic, Row10LibraryFallbackIsRefused) {
  expect("r10_thrust.cu", status::suspicious, "vendor library");
  const auto c = check("#include <cublas_v2.h>\n#include \"kevolve/abi.h\"\nextern \"C\" int kevolve_kernel(const kv_args*, cudaStream_t) { return 0; }\n");
  EXPECT_EQ(c.result, status::suspicious);
  EXPECT_NE(c.reason.find("vendor library"), std::string::npos) << c.reason;
}
TEST_F(CudaStatic, Row14DeviceMallocPastTheScanIsCaughtInThePtx) {
  expect("r14_device_malloc_pasted.cu", status::suspicious, "allocates device memory inside a kernel");
}

// ---- runtime: a GPU ------------------------------------------------------------

class CudaTrust : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (!have_gpu(skip_) || !have_nvcc(skip_)) return;
    op_ = new spec::operator_spec(test_operator("t_softmax"));
    auto hw = eval::cuda_hardware_profile(false);
    if (!hw) {
      skip_ = "no CUDA device: " + hw.error().message;
      return;
    }
    hw_ = new spec::hardware_profile(*hw);
    auto e = eval::evaluator::create(*op_, "fp32", options(), *hw_);
    if (!e) {
      skip_ = "";
      error_ = e.error().message;
      return;
    }
    ev_ = e->release();
  }
  static void TearDownTestSuite() {
    delete ev_;
    delete op_;
    delete hw_;
    ev_ = nullptr;
  }
  void SetUp() override {
    if (!skip_.empty()) GTEST_SKIP() << skip_;
    ASSERT_NE(ev_, nullptr) << "the cuda evaluator could not start: " << error_;
  }
  static eval::evaluator_options options() {
    auto o = fast_options();
    o.call_timeout = std::chrono::milliseconds(4000);
    o.rotation_bytes = 64.0 * (1 << 20);
    o.max_sets = 16;
    return o;
  }
  static eval::verdict run(eval::evaluator* e, const std::string& kernel) {
    auto v = e->evaluate(kernel_source("cheats/cuda/" + kernel));
    EXPECT_TRUE(v.has_value()) << (v ? "" : v.error().message);
    return v ? *v : eval::verdict{};
  }
  static void expect(const std::string& kernel, status want, const std::string& reason_part) {
    const eval::verdict v = run(ev_, kernel);
    EXPECT_EQ(eval::to_string(v.result), std::string(eval::to_string(want))) << kernel << ": " << v.reason;
    EXPECT_NE(v.reason.find(reason_part), std::string::npos) << kernel << ": reason was: " << v.reason;
    EXPECT_EQ(v.fitness, 0.0) << kernel;
  }
  // The smallest candidate median over the timed shapes.
  static double min_median(const eval::verdict& v) {
    double m = 1e9;
    for (const auto& s : v.shapes)
      if (!s.holdout) m = std::min(m, s.candidate.median_s);
    return m;
  }
  static std::string skip_, error_;
  static spec::operator_spec* op_;
  static spec::hardware_profile* hw_;
  static eval::evaluator* ev_;
};
std::string CudaTrust::skip_, CudaTrust::error_;
spec::operator_spec* CudaTrust::op_ = nullptr;
spec::hardware_profile* CudaTrust::hw_ = nullptr;
eval::evaluator* CudaTrust::ev_ = nullptr;

TEST_F(CudaTrust, HonestKernelPassesEveryShape) {
  const eval::verdict v = run(ev_, "honest_softmax.cu");
  ASSERT_EQ(v.result, status::ok) << v.reason;
  EXPECT_EQ(v.backend, "cuda");
  EXPECT_GT(v.fitness, 0.0);
  ASSERT_EQ(v.shapes.size(), 4u);
  for (const auto& s : v.shapes) {
    EXPECT_EQ(s.result, status::ok) << s.shape;
    EXPECT_EQ(s.trials, 4) << s.shape;
    if (!s.holdout) {
      EXPECT_GE(s.candidate.runs, 6) << s.shape;
      EXPECT_GT(s.baseline.median_s, 0.0) << s.shape;
      EXPECT_GT(s.roofline_fraction, 0.0) << s.shape;
    }
  }
  const eval::verdict ex = ev_->evaluate(example("softmax.cu")).value();
  EXPECT_EQ(ex.result, status::ok) << ex.reason;
}
TEST_F(CudaTrust, Row02UntouchedOutputIsWrong) {
  expect("r02_untouched_output.cu", status::wrong_result, "elements wrong");
}
TEST_F(CudaTrust, Row03MutatedInputsAreWrong) {
  expect("r03_mutate_inputs.cu", status::wrong_result, "modified its inputs");
}
TEST_F(CudaTrust, Row04PartialOutputIsWrong) {
  expect("r04_first_rows_only.cu", status::wrong_result, "elements wrong");
}
TEST_F(CudaTrust, Row05WorkOnAHiddenStreamIsStillTimed) {
  // Each call spins 200 us on the per-thread stream; hidden from the timer it
  // would measure a few microseconds.
  const eval::verdict v = run(ev_, "r05_hidden_stream_cast.cu");
  ASSERT_EQ(v.result, status::ok) << v.reason;
  EXPECT_GT(min_median(v), 100e-6) << "work on another stream escaped the timer";
}
// TRUST row 17, as on the cpu (trust_test.cpp): the worker parks the host
// threads a kernel left running before the outputs come back from the
// device; one that will not stop is hidden work. The CUDA runtime's own
// threads are never parked (the honest kernels above pass).
TEST_F(CudaTrust, Row17WorkLaunchedAfterTheCallIsRejected) {
  const eval::verdict v = run(ev_, "r17_deferred_half.cu");
  const bool wrong = v.result == status::wrong_result && v.reason.find("elements wrong") != std::string::npos;
  const bool hidden = v.result == status::suspicious && v.reason.find("would not stop") != std::string::npos;
  EXPECT_TRUE(wrong || hidden) << eval::to_string(v.result) << ": " << v.reason;
  EXPECT_EQ(v.fitness, 0.0);
}
TEST_F(CudaTrust, Row17AThreadThatRefusesToStopIsSuspicious) {
  expect("r17_unstoppable_thread.cu", status::suspicious, "would not stop");
}
TEST_F(CudaTrust, Row08SkippingWorkWhenTheOutputLooksDoneDoesNotPay) {
  const eval::verdict v = run(ev_, "r08_skip_if_done.cu");
  ASSERT_EQ(v.result, status::ok) << v.reason;
  EXPECT_GT(min_median(v), 100e-6) << "timed calls found their outputs already computed";
}
TEST_F(CudaTrust, Row14IllegalAddressCrashesTheWorkerNotTheEvaluator) {
  expect("r14_illegal_address.cu", status::crashed, "CUDA error");
  const eval::verdict v = run(ev_, "honest_softmax.cu");
  EXPECT_EQ(v.result, status::ok) << "after a crashed worker: " << v.reason;
}
TEST_F(CudaTrust, Row16FasterThanTheRooflineIsSuspicious) {
  spec::hardware_profile slow = *hw_;
  slow.peak_bandwidth_gbs = 0.01;
  auto e = eval::evaluator::create(*op_, "fp32", options(), slow);
  ASSERT_TRUE(e.has_value()) << e.error().message;
  const eval::verdict v = (*e)->evaluate(kernel_source("cheats/cuda/honest_softmax.cu")).value();
  EXPECT_EQ(v.result, status::suspicious) << v.reason;
  EXPECT_NE(v.reason.find("faster than physically possible"), std::string::npos) << v.reason;
}
// A wrong cuda_baseline is caught before its time is used.
TEST_F(CudaTrust, WrongTimedBaselineIsAnError) {
  auto e = eval::evaluator::create(test_operator("t_softmax_wrong_cuda_baseline"), "fp32", options(), *hw_);
  ASSERT_TRUE(e.has_value()) << e.error().message;
  auto v = (*e)->evaluate(kernel_source("cheats/cuda/honest_softmax.cu"));
  ASSERT_FALSE(v.has_value()) << "timed against a wrong baseline: " << eval::to_string(v->result) << " " << v->reason;
  EXPECT_NE(v.error().message.find("disagrees with the reference at shape 'rows_1024'"), std::string::npos)
      << v.error().message;
}

TEST_F(CudaTrust, Row19HungKernelTimesOutAndTheNextOneRuns) {
  expect("r19_hang.cu", status::timeout, "killed");
  const eval::verdict v = run(ev_, "honest_softmax.cu");
  EXPECT_EQ(v.result, status::ok) << "after a hung worker: " << v.reason;
}

}  // namespace
}  // namespace kevolve::testing
