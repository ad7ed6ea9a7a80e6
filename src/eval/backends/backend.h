// What differs between backends (cpu, cuda, later hip and mtia_emu): how a
// kernel is compiled (compiler, flags, cache key, resource report), what its
// compiled form may contain, which worker process runs it and how that
// worker times it. Everything else (inputs, references, verification, the
// timing protocol, the roofline) is shared by the evaluator.
#pragma once

#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/error.h"
#include "eval/backends/ceiling.h"
#include "eval/backends/registry.h"
#include "eval/source_policy.h"
#include "eval/verdict.h"
#include "eval/worker_client.h"
#include "spec/hardware_profile.h"

namespace kevolve::eval {

struct compiled_kernel {
  bool ok = false;
  std::string failure;  // when !ok: why, when the backend can say more than "the compiler rejected it"
  std::filesystem::path library;  // valid when ok
  std::string hash;               // cache key
  compile_report report;
};

// What a compiled candidate may not contain, as a verdict.
struct abi_check {
  status result = status::ok;
  std::string reason;
};

class backend {
 public:
  virtual ~backend() = default;
  virtual const char* name() const = 0;
  // Its row in the registry (registry.h): what every component knows of it.
  const backend_descriptor& descriptor() const;

  // Compiles `source`; `libraries` are names from the backend's linkable_libraries (registry.h).
  // Fails (error) only when the compiler cannot be run at all; a source that
  // does not compile is a compiled_kernel with ok == false.
  virtual expected<compiled_kernel> compile(const std::string& source, const std::vector<std::string>& libraries,
                                            const std::string& display_name) = 0;
  // Compiler, version and target: part of every cache key.
  virtual const std::string& toolchain_id() = 0;

  // Static checks of a candidate's source beyond the common ones.
  virtual std::vector<policy_violation> scan(const std::string& source,
                                             const std::vector<std::string>& allowed_libraries) const = 0;
  // Checks of the compiled candidate (exports, imports, static state).
  virtual expected<abi_check> check_compiled(const compiled_kernel& k,
                                             const std::vector<std::string>& allowed_libraries) const = 0;

  // How a worker for this backend's kernels is started.
  virtual worker_options worker(int threads, bool sandbox, uint64_t address_space_bytes) const = 0;
  // Workers that keep tensors on a device copy them back to the shared
  // region only when asked (wire::op::download) or after a single call.
  virtual bool keeps_device_copies() const { return false; }
  // Wall time a timed request may take beyond its reported kernel time for
  // copies of one input set between host and device.
  virtual double copy_allowance_seconds(double set_bytes) const {
    (void)set_bytes;
    return 0.0;
  }
  // Host CPU seconds the worker may spend per timed call beyond the kernel's
  // own time, and how many host threads that time may run on. A CPU kernel
  // runs on the evaluator's threads; a GPU worker has one host thread that
  // launches, poisons outputs and records events around every call and waits
  // (spinning) for the device.
  virtual double host_seconds_per_call() const { return 5e-6; }
  virtual bool kernel_runs_on_host_threads() const { return true; }
  // The file name compiler messages call a candidate (its descriptor's).
  const char* source_name() const { return descriptor().source_name.c_str(); }
  // Empty when kernels can run on this node; else why not. A backend that
  // cannot run here still compiles and checks candidates: their verdict is
  // compile_only (never timed, never a speedup).
  virtual std::string cannot_run_here() const { return {}; }
  // The clock kernel times come from, for reports.
  virtual const char* timer() const = 0;
  // A timer whose reading depends only on what the kernel does (an
  // emulator's cycle count): one call per side and shape measures it, and
  // the worker's wall and CPU time say nothing about it.
  bool deterministic_timer() const { return descriptor().traits.deterministic_timer; }
  // The roofline a shape is placed on, for a call touching `call_bytes`
  // (an emulated chip keeps small calls in on-chip SRAM).
  virtual spec::hardware_profile roofline_profile(const spec::hardware_profile& hw, double call_bytes) const {
    (void)call_bytes;
    return hw;
  }
  // The attainable ceiling of a shape (ceiling.h); seconds 0: none.
  virtual ceiling attainable(const ceiling_work& work) const {
    (void)work;
    return {};
  }
  // Workers that answer wire::op::profile: the last call's profile as text,
  // and its bottleneck class when the worker knows better than the roofline.
  virtual std::string describe_profile(const std::vector<int64_t>& words, std::string* bottleneck) const {
    (void)words;
    (void)bottleneck;
    return {};
  }
  // The same profile as counters by short name (the shape's `metrics`, which
  // the synthesizers' rules and prompts read), e.g. an emulator's engine busy %.
  virtual std::map<std::string, double> profile_metrics(const std::vector<int64_t>& words) const {
    (void)words;
    return {};
  }
};

// Steps that need no device: the source policy, the compile (cached) and the
// checks of the compiled form. `result` is ok when the kernel may run.
struct static_check {
  status result = status::ok;
  std::string reason;
  compiled_kernel kernel;  // kernel.report is set once compiling was tried
};
expected<static_check> check_statically(backend& b, const std::string& source,
                                        const std::vector<std::string>& allowed_libraries);

// A backend of the registry (registry.h); unknown names are an error naming
// the backends there are. Built-ins: cpu and mtia_emu always; cuda in every
// build (compiling needs nvcc, running needs kevolve-cuda-worker and a GPU);
// hip (compiling needs hipcc; running needs kevolve-hip-worker and an AMD
// GPU, else verdicts are compile_only); hip_on_cuda (HIP sources through
// kevolve's HIP-on-CUDA header on an NVIDIA GPU: correctness on another
// device, never timed).
expected<std::unique_ptr<backend>> make_backend(const std::string& name, std::chrono::seconds compile_timeout);

// The hardware profile a backend's evaluator places kernels on (`threads`:
// the CPU's evaluator threads, for backends whose profile depends on them).
expected<spec::hardware_profile> backend_hardware(const backend_descriptor& d, int threads);

// Whether this node can evaluate the backend; the error says why not
// ("backend 'cuda' is not usable here: ...").
expected<void> backend_usable(const backend_descriptor& d);

}  // namespace kevolve::eval
