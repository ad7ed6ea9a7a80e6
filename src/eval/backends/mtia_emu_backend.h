// The mtia_emu backend: candidates are C++ written against the intrinsics of
// <kevolve/mtia.h>, compiled by g++ into a shared object (one export,
// kevolve_kernel(const kv_args*, kv_mtia_device*)) and run inside the
// MTIA-like emulator (src/emu/mtia) in kevolve-mtia-worker, a sandboxed
// process per candidate. Tensors live in emulated device memory; kernel time
// is the emulator's time, which depends only on the commands a kernel
// issues, so one call per shape measures it exactly.
#pragma once

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "emu/mtia/params.h"
#include "eval/backends/backend.h"
#include "eval/backends/cpu_backend.h"
#include "spec/hardware_profile.h"

namespace kevolve::eval {

// kevolve-mtia-worker: $KEVOLVE_MTIA_WORKER, else beside this binary.
std::filesystem::path mtia_worker_executable();

// The emulator profile in use: config/hardware/<name>.yaml with name
// $KEVOLVE_MTIA_PROFILE, else mtia2i.
std::filesystem::path mtia_profile_path();

// The profile as the evaluator's hardware profile (peaks: SRAM bandwidth and
// DPE rate; the roofline of each shape is refined by roofline_profile()).
expected<spec::hardware_profile> mtia_hardware_profile();

// Source rules on top of the common ones: no access to the emulator behind
// the device handle (its implementation pointer, its function table, its
// internal headers), no pointer reinterpretation (tensor addresses are device
// addresses: data moves only through DMA).
std::vector<policy_violation> scan_mtia_source(const std::string& source, const std::vector<std::string>& allowed);

class mtia_emu_backend : public backend {
 public:
  mtia_emu_backend(std::filesystem::path cache_dir, std::chrono::seconds timeout);
  const char* name() const override { return "mtia_emu"; }
  expected<compiled_kernel> compile(const std::string& source, const std::vector<std::string>& libraries,
                                    const std::string& display_name) override {
    return compiler_.compile(source, libraries, display_name);
  }
  const std::string& toolchain_id() override { return compiler_.toolchain_id(); }
  std::vector<policy_violation> scan(const std::string& source, const std::vector<std::string>& allowed) const override {
    return scan_mtia_source(source, allowed);
  }
  expected<abi_check> check_compiled(const compiled_kernel& k, const std::vector<std::string>& allowed) const override;
  worker_options worker(int threads, bool sandbox, uint64_t address_space_bytes) const override;
  const char* timer() const override { return "the emulator's cycle count (emulated microseconds), not wall time"; }
  spec::hardware_profile roofline_profile(const spec::hardware_profile& hw, double call_bytes) const override;
  // From the profile's parameters (mtia_emu_ceiling.h); none when the profile did not load.
  ceiling attainable(const ceiling_work& work) const override;
  std::string describe_profile(const std::vector<int64_t>& words, std::string* bottleneck) const override;
  // <engine>_pct: each engine's busy share of the run (fi_in, fi_out, dpe, re, se, vec, mlu).
  std::map<std::string, double> profile_metrics(const std::vector<int64_t>& words) const override;

 private:
  cpu_compiler compiler_;
  emu::mtia::params params_;
  std::string params_error_;
};

}  // namespace kevolve::eval
