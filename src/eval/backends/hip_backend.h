// The hip backend: hipcc (Debian's ROCm 5.2, clang-15) compiles a candidate
// .hip into a shared object holding code objects for every configured
// offload arch (gfx90a, gfx940, and gfx942 where the toolchain knows it),
// with a content-addressed cache; the AMDGPU backend's kernel-resource-usage
// remarks give each kernel's VGPRs, SGPRs, AGPRs, LDS, scratch, spills and
// occupancy per arch. A kernel over the LDS limit (the compiler refuses it)
// or one that spills VGPRs is compile_failed with the reason.
//
// Running needs an AMD GPU (/dev/kfd, hipGetDeviceCount > 0) and
// kevolve-hip-worker; without them the evaluator stops after these checks
// with the verdict compile_only. The run path on AMD hardware (worker,
// probe) shares its code with the cuda backend but has never run on an AMD
// GPU: it is unverified there.
#pragma once

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "eval/backends/backend.h"
#include "eval/backends/compile_cache.h"
#include "eval/backends/gpu_common.h"
#include "eval/elf_inspect.h"

namespace kevolve::eval {

// hipcc: $KEVOLVE_HIPCC, else hipcc on PATH, else /usr/bin/hipcc.
std::string hipcc_path();

// Whether the toolchain accepts --offload-arch=<arch> (asks the compiler).
bool hipcc_knows_arch(const std::string& arch);

// The offload archs to compile for: $KEVOLVE_HIP_ARCHS ("gfx90a,gfx940"),
// else gfx90a and gfx940, plus gfx942 when hipcc_knows_arch says so. Sorted.
std::vector<std::string> hip_offload_archs();

// Resources from `-Rpass-analysis=kernel-resource-usage` remarks. The
// compiler reports the archs in sorted order, one block per kernel each;
// `archs` (sorted) labels them.
std::vector<gpu_kernel_resources> parse_hip_resource_remarks(const std::string& text,
                                                             const std::vector<std::string>& archs);

// Why a compile that used too many resources fails, or "" (LDS over the
// limit is refused by the compiler itself; VGPR spills are refused here).
std::string hip_resource_failure(const std::string& diagnostics, const std::vector<gpu_kernel_resources>& kernels);

// kevolve-hip-worker and kevolve-hip-probe: $KEVOLVE_HIP_WORKER /
// $KEVOLVE_HIP_PROBE, else beside this binary.
std::filesystem::path hip_worker_executable();
std::filesystem::path hip_probe_executable();

// "" when this node can run HIP kernels (an AMD GPU and kevolve-hip-worker);
// else why not. Asked once per process.
const std::string& hip_cannot_run_here();

class hip_compiler {
 public:
  hip_compiler(std::filesystem::path cache_dir, std::chrono::seconds timeout, std::vector<std::string> archs = {});
  expected<compiled_kernel> compile(const std::string& source, const std::vector<std::string>& libraries,
                                    const std::string& display_name = "kernel.hip");
  // "hipcc clang 15.0.6 (...) | gfx90a,gfx940 | abi <hash>"; fails when hipcc cannot run.
  expected<std::string> toolchain();
  std::vector<std::string> flags(const std::vector<std::string>& libraries) const;
  const std::vector<std::string>& archs() const { return archs_; }

 private:
  compile_cache cache_;
  std::vector<std::string> archs_;
  std::string hipcc_;
  std::string toolchain_id_;
};

// Source rules on top of the common ones: no synchronization, streams,
// events, graphs, allocation, copies or device control; launches only on the
// given stream; no mutable __device__ globals; rocBLAS/MIOpen/hipCUB only
// when the operator allows them.
std::vector<policy_violation> scan_hip_source(const std::string& source, const std::vector<std::string>& allowed);

// The compiled candidate: one export; HIP runtime imports from an
// allow-list; no library the operator does not allow; no mutable host
// statics beyond hipcc's registration objects.
abi_check check_hip_library(const elf_report& elf, const std::vector<gpu_kernel_resources>& kernels,
                            const std::vector<std::string>& allowed);

class hip_backend : public gpu_backend {
 public:
  hip_backend(std::filesystem::path cache_dir, std::chrono::seconds timeout, std::vector<std::string> archs = {})
      : compiler_(std::move(cache_dir), timeout, std::move(archs)) {}
  const char* name() const override { return "hip"; }
  std::string cannot_run_here() const override { return hip_cannot_run_here(); }
  expected<compiled_kernel> compile(const std::string& source, const std::vector<std::string>& libraries,
                                    const std::string& display_name) override {
    return compiler_.compile(source, libraries, display_name);
  }
  const std::string& toolchain_id() override;
  std::vector<policy_violation> scan(const std::string& source, const std::vector<std::string>& allowed) const override {
    return scan_hip_source(source, allowed);
  }
  expected<abi_check> check_compiled(const compiled_kernel& k, const std::vector<std::string>& allowed) const override;
  worker_options worker(int threads, bool sandbox, uint64_t) const override {
    return device_worker(hip_worker_executable(), threads, sandbox);
  }
  const char* timer() const override {
    return "hipEvents on the null stream, which kernels are given; caches flushed before every timed call";
  }
  hip_compiler& compiler() { return compiler_; }

 private:
  hip_compiler compiler_;
  std::string id_;
};

}  // namespace kevolve::eval
