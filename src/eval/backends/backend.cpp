#include "eval/backends/backend.h"

#include <unistd.h>

#include <cassert>

#include "common/paths.h"
#include "eval/backends/cpu_backend.h"
#include "eval/backends/cpu_probe.h"
#include "eval/backends/cuda_backend.h"
#include "eval/backends/cuda_probe.h"
#include "eval/backends/hip_backend.h"
#include "eval/backends/hip_probe.h"
#include "eval/backends/mtia_emu_backend.h"

namespace kevolve::eval {

expected<static_check> check_statically(backend& b, const std::string& source,
                                        const std::vector<std::string>& allowed) {
  static_check c;
  const auto violations = b.scan(source, allowed);
  if (!violations.empty()) {
    c.result = status::suspicious;
    c.reason = "the source does what a kernel may not: " + describe(violations);
    return c;
  }
  auto k = b.compile(source, allowed, b.source_name());
  if (!k) return tl::unexpected(k.error());
  c.kernel = std::move(*k);
  if (!c.kernel.ok) {
    c.result = status::compile_failed;
    c.reason = c.kernel.failure.empty() ? "the compiler rejected the kernel" : c.kernel.failure;
    return c;
  }
  auto abi = b.check_compiled(c.kernel, allowed);
  if (!abi) return tl::unexpected(abi.error());
  c.result = abi->result;
  c.reason = abi->reason;
  return c;
}

namespace {

// What the built-in backends do; their descriptors are registry.cpp's rows.
struct implementation {
  const char* name;
  std::unique_ptr<backend> (*make)(std::chrono::seconds compile_timeout);
  expected<spec::hardware_profile> (*hardware)(int threads);
  expected<void> (*usable)();
};

expected<void> usable_if_profiled(const spec::hardware_profile&) { return {}; }

const implementation builtin[] = {
    {"cpu",
     [](std::chrono::seconds t) -> std::unique_ptr<backend> {
       return std::make_unique<cpu_backend>(cache_root() / "compile" / "cpu", t);
     },
     [](int threads) { return cpu_hardware_profile(threads, false); },
     []() -> expected<void> { return {}; }},
    {"cuda",
     [](std::chrono::seconds t) -> std::unique_ptr<backend> {
       return std::make_unique<cuda_backend>(cache_root() / "compile" / "cuda", t);
     },
     [](int) { return cuda_hardware_profile(false); },
     []() -> expected<void> { return cuda_hardware_profile(false).and_then(usable_if_profiled); }},
    {"hip",
     [](std::chrono::seconds t) -> std::unique_ptr<backend> {
       return std::make_unique<hip_backend>(cache_root() / "compile" / "hip", t);
     },
     [](int) { return hip_hardware_profile(false); },
     []() -> expected<void> {
       // Compiling needs hipcc; without an AMD GPU every verdict is compile_only.
       hip_compiler c(cache_root() / "compile" / "hip", std::chrono::seconds(60));
       if (auto t = c.toolchain(); !t) return tl::unexpected(t.error());
       return {};
     }},
    {"hip_on_cuda",
     [](std::chrono::seconds t) -> std::unique_ptr<backend> {
       return std::make_unique<cuda_backend>(cache_root() / "compile" / "hip_on_cuda", t, std::string(), true);
     },
     [](int) {
       auto hw = cuda_hardware_profile(false);
       if (hw) hw->backend = "hip_on_cuda";
       return hw;
     },
     []() -> expected<void> { return cuda_hardware_profile(false).and_then(usable_if_profiled); }},
    {"mtia_emu",
     [](std::chrono::seconds t) -> std::unique_ptr<backend> {
       return std::make_unique<mtia_emu_backend>(cache_root() / "compile" / "mtia_emu", t);
     },
     [](int) { return mtia_hardware_profile(); },
     []() -> expected<void> {
       // The emulator is part of every build; it needs its worker and profile.
       if (auto hw = mtia_hardware_profile(); !hw) return tl::unexpected(hw.error());
       const auto worker = mtia_worker_executable();
       if (::access(worker.c_str(), X_OK) != 0)
         return make_error(errc::toolchain_error, "no executable " + worker.string());
       return {};
     }},
};

const implementation* builtin_implementation(const backend_descriptor& d) {
  for (const auto& i : builtin)
    if (d.name == i.name) return &i;
  return nullptr;
}

}  // namespace

const backend_descriptor& backend::descriptor() const {
  const backend_descriptor* d = find_backend(name());
  assert(d && "every backend instance has a registry row");
  return *d;
}

expected<std::unique_ptr<backend>> make_backend(const std::string& name, std::chrono::seconds compile_timeout) {
  auto d = require_backend(name.empty() ? host_backend().name : name);
  if (!d) return tl::unexpected(d.error());
  if ((*d)->hooks.make) return (*d)->hooks.make(compile_timeout);
  const implementation* i = builtin_implementation(**d);
  assert(i && "a built-in backend has an implementation");
  return i->make(compile_timeout);
}

expected<spec::hardware_profile> backend_hardware(const backend_descriptor& d, int threads) {
  if (d.hooks.hardware) return d.hooks.hardware(threads);
  if (const implementation* i = builtin_implementation(d)) return i->hardware(threads);
  return make_error(errc::invalid_input, "backend '" + d.name + "' brings no hardware profile");
}

expected<void> backend_usable(const backend_descriptor& d) {
  expected<void> ok;
  if (d.hooks.usable) ok = d.hooks.usable();
  else if (const implementation* i = builtin_implementation(d)) ok = i->usable();
  if (!ok) return make_error(errc::toolchain_error, "backend '" + d.name + "' is not usable here: " + ok.error().message);
  return {};
}

}  // namespace kevolve::eval
