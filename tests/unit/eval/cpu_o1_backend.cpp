#include "cpu_o1_backend.h"

#include "common/paths.h"
#include "eval/backends/cpu_backend.h"
#include "eval/backends/cpu_probe.h"

namespace kevolve::testing {
namespace {

class cpu_o1_backend : public eval::backend {
 public:
  cpu_o1_backend(std::chrono::seconds timeout)
      : compiler_(cache_root() / "compile" / "cpu_o1", timeout, {"-O1"}, " | cpu_o1"),
        cpu_(cache_root() / "compile" / "cpu", timeout) {}
  const char* name() const override { return "cpu_o1"; }
  expected<eval::compiled_kernel> compile(const std::string& source, const std::vector<std::string>& libraries,
                                          const std::string& display_name) override {
    return compiler_.compile(source, libraries, display_name);
  }
  const std::string& toolchain_id() override { return compiler_.toolchain_id(); }
  std::vector<eval::policy_violation> scan(const std::string& source, const std::vector<std::string>& allowed) const override {
    return cpu_.scan(source, allowed);
  }
  expected<eval::abi_check> check_compiled(const eval::compiled_kernel& k,
                                           const std::vector<std::string>& allowed) const override {
    return cpu_.check_compiled(k, allowed);
  }
  eval::worker_options worker(int threads, bool sandbox, uint64_t address_space_bytes) const override {
    return cpu_.worker(threads, sandbox, address_space_bytes);
  }
  const char* timer() const override { return cpu_.timer(); }

 private:
  eval::cpu_compiler compiler_;
  eval::cpu_backend cpu_;
};

}  // namespace

eval::backend_descriptor cpu_o1_descriptor() {
  eval::backend_descriptor d;
  d.name = "cpu_o1";
  d.language = "C++";
  d.source_name = "kernel.cpp";
  d.abi_signature = "extern \"C\" int kevolve_kernel(const kv_args* a)";
  d.hardware_tag = "x86";
  d.baseline_of = eval::host_backend().name;  // timed against the operator's cpu baseline
  d.linkable_libraries = eval::host_backend().linkable_libraries;
  d.traits.profile_per_thread_count = true;
  d.hooks.make = [](std::chrono::seconds t) -> std::unique_ptr<eval::backend> { return std::make_unique<cpu_o1_backend>(t); };
  d.hooks.hardware = [](int threads) {
    auto hw = eval::cpu_hardware_profile(threads, false);
    if (hw) hw->backend = "cpu_o1";
    return hw;
  };
  d.hooks.usable = []() -> expected<void> { return {}; };
  return d;
}

}  // namespace kevolve::testing
