// The cuda backend: nvcc compiles a candidate .cu into a shared object (one
// export, the CUDA runtime linked as a shared library so that every runtime
// call it makes is visible) plus its PTX, with a content-addressed cache
// keyed by source, flags and nvcc version; ptxas -v gives each entry's
// registers, shared memory, stack and spills. The checks here are static and
// need no GPU; kevolve-cuda-worker (cuda_worker_main.cpp) runs kernels.
#pragma once

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "eval/backends/backend.h"
#include "eval/backends/compile_cache.h"
#include "eval/backends/gpu_common.h"
#include "eval/elf_inspect.h"
#include "eval/backends/hip_backend.h"

namespace kevolve::eval {

// The ptxas -v lines of one compile, per entry function.
std::vector<gpu_kernel_resources> parse_ptxas_report(const std::string& text);

// The target to compile for: $KEVOLVE_CUDA_ARCH (e.g. "sm_90" or "sm_90a"),
// else the first GPU's compute capability from nvidia-smi (sm_90a and
// sm_100a for Hopper and Blackwell: their arch-specific instructions), else sm_90a.
std::string detect_cuda_arch();

// Where nvcc is: $KEVOLVE_NVCC, else nvcc on PATH, else /usr/local/cuda/bin/nvcc.
std::string nvcc_path();

// kevolve-cuda-worker: $KEVOLVE_CUDA_WORKER, else beside this binary.
std::filesystem::path cuda_worker_executable();

// The folder of kevolve's HIP-on-CUDA header (src/abi/hip_on_cuda): its
// hip/hip_runtime.h maps the HIP runtime API a kernel uses onto CUDA's and
// exposes CUDA's 32-lane warp as the wave size.
std::filesystem::path hip_on_cuda_include();

class cuda_compiler {
 public:
  // `hip_source`: the sources are HIP, compiled through the HIP-on-CUDA header.
  cuda_compiler(std::filesystem::path cache_dir, std::chrono::seconds timeout, std::string arch = {},
                bool hip_source = false);
  expected<compiled_kernel> compile(const std::string& source, const std::vector<std::string>& libraries,
                                    const std::string& display_name = "kernel.cu");
  // "nvcc V13.0.88 (Build ...) | sm_90 | abi <hash>"; fails when nvcc cannot run.
  expected<std::string> toolchain();
  std::vector<std::string> flags(const std::vector<std::string>& libraries) const;
  const std::string& arch() const { return arch_; }
  // The PTX of a compiled kernel (cached beside its library).
  static std::filesystem::path ptx_path(const compiled_kernel& k) {
    auto p = k.library;
    return p.replace_extension(".ptx");
  }

 private:
  compile_cache cache_;
  std::string arch_;
  bool hip_source_ = false;
  std::string nvcc_;
  std::string toolchain_id_;
};

// Source rules of the cuda backend on top of the common ones (inline PTX is
// allowed here): no synchronization, no streams but the given one, no launch
// on the default stream, no allocation, no L2-persistence control, no
// events, graphs or driver API, no vendor library the operator does not allow.
std::vector<policy_violation> scan_cuda_source(const std::string& source, const std::vector<std::string>& allowed);

// The compiled candidate: exactly one export; CUDA runtime imports from an
// allow-list only; no library the operator does not allow (cuBLAS, cuDNN ...);
// no mutable host statics beyond nvcc's registration; no mutable device
// globals and no device-side malloc (read from the PTX).
abi_check check_cuda_library(const elf_report& elf, const std::string& ptx, const std::vector<std::string>& allowed);

// With `hip_source`, the backend "hip_on_cuda": HIP candidates compiled
// through the HIP-on-CUDA header and run by kevolve-cuda-worker, under the
// cuda backend's checks of the compiled form; a correctness check on
// another device, never a performance figure for AMD (the evaluator does
// not time it).
class cuda_backend : public gpu_backend {
 public:
  cuda_backend(std::filesystem::path cache_dir, std::chrono::seconds timeout, std::string arch = {},
               bool hip_source = false)
      : compiler_(std::move(cache_dir), timeout, std::move(arch), hip_source), hip_source_(hip_source) {}
  const char* name() const override { return hip_source_ ? "hip_on_cuda" : "cuda"; }
  expected<compiled_kernel> compile(const std::string& source, const std::vector<std::string>& libraries,
                                    const std::string& display_name) override {
    return compiler_.compile(source, libraries, display_name);
  }
  const std::string& toolchain_id() override;
  std::vector<policy_violation> scan(const std::string& source, const std::vector<std::string>& allowed) const override {
    return hip_source_ ? scan_hip_source(source, allowed) : scan_cuda_source(source, allowed);
  }
  expected<abi_check> check_compiled(const compiled_kernel& k, const std::vector<std::string>& allowed) const override;
  worker_options worker(int threads, bool sandbox, uint64_t) const override {
    return device_worker(cuda_worker_executable(), threads, sandbox);
  }
  const char* timer() const override { return "CUDA events on the legacy default stream, which kernels are given"; }
  cuda_compiler& compiler() { return compiler_; }

 private:
  cuda_compiler compiler_;
  bool hip_source_ = false;
  std::string id_;
};

}  // namespace kevolve::eval
