#include "eval/backends/registry.h"

#include <cassert>
#include <cstdlib>
#include <deque>
#include <mutex>

namespace kevolve::eval {
namespace {

// The built-in backends, one row each. Their behaviour: backend.cpp.
std::deque<backend_descriptor> builtin_rows() {
  std::deque<backend_descriptor> rows;
  {
    backend_descriptor d;
    d.name = "cpu";
    d.language = "C++";
    d.source_name = "kernel.cpp";
    d.abi_signature = "extern \"C\" int kevolve_kernel(const kv_args* a)";
    d.hardware_tag = "x86";
    d.baseline_of = "cpu";
    d.legacy_baseline_key = "baseline";
    d.linkable_libraries = {"openblas", "dnnl"};
    d.torch_device = "cpu";
    d.torch_compile = true;  // inductor's CPU code generation (the project's PyTorch)
    d.torch_by_default = true;
    d.traits.host = true;
    d.traits.profile_per_thread_count = true;
    rows.push_back(std::move(d));
  }
  {
    backend_descriptor d;
    d.name = "cuda";
    d.language = "CUDA C++";
    d.source_name = "kernel.cu";
    d.abi_signature = "extern \"C\" int kevolve_kernel(const kv_args* a, cudaStream_t stream)";
    d.abi_marker = "Stream_t";
    d.abi_marker_meaning = "the stream";
    d.hardware_tag = "h200";
    d.device_env = "CUDA_VISIBLE_DEVICES";
    d.baseline_of = "cuda";
    d.legacy_baseline_key = "cuda_baseline";
    d.linkable_libraries = {"cublas", "cudnn"};
    d.torch_device = "cuda";
    d.torch_compile = true;
    d.torch_by_default = true;
    d.traits.uses_device = true;
    d.traits.ncu_profiles = true;
    rows.push_back(std::move(d));
  }
  {
    backend_descriptor d;
    d.name = "hip";
    d.language = "HIP C++";
    d.source_name = "kernel.hip";
    d.abi_signature = "extern \"C\" int kevolve_kernel(const kv_args* a, hipStream_t stream)";
    d.abi_marker = "Stream_t";
    d.abi_marker_meaning = "the stream";
    d.hardware_tag = "mi300x";
    d.device_env = "HIP_VISIBLE_DEVICES";
    d.baseline_of = "hip";
    d.legacy_baseline_key = "hip_baseline";
    d.linkable_libraries = {"rocblas", "miopen"};
    d.traits.uses_device = true;
    rows.push_back(std::move(d));
  }
  {
    // HIP sources on an NVIDIA GPU through kevolve's HIP-on-CUDA header.
    backend_descriptor d;
    d.name = "hip_on_cuda";
    d.language = "HIP C++";
    d.source_name = "kernel.hip";
    d.abi_signature = "extern \"C\" int kevolve_kernel(const kv_args* a, hipStream_t stream)";
    d.abi_marker = "Stream_t";
    d.abi_marker_meaning = "the stream";
    d.hardware_tag = "h200";
    d.device_env = "CUDA_VISIBLE_DEVICES";
    d.baseline_of = "cuda";
    d.linkable_libraries = {"cublas", "cudnn"};
    d.verdict_note =
        "hip_on_cuda: the HIP source ran on an NVIDIA GPU through kevolve's HIP-on-CUDA header (32-lane waves): "
        "correctness on another device, not an AMD performance figure; never timed";
    d.verify_only_reason =
        ": correctness on another device (NVIDIA, through kevolve's HIP-on-CUDA header), not an AMD performance figure";
    d.traits.uses_device = true;
    d.traits.verify_only = true;
    d.traits.sweepable = false;
    rows.push_back(std::move(d));
  }
  {
    backend_descriptor d;
    d.name = "mtia_emu";
    d.language = "C++ against the emulator's intrinsics (kevolve/mtia.h)";
    d.source_name = "kernel.cpp";
    d.abi_signature = "extern \"C\" int kevolve_kernel(const kv_args* a, kv_mtia_device* device)";
    d.abi_marker = "kv_mtia_device";
    d.abi_marker_meaning = "the kv_mtia_device*";
    d.hardware_tag = "mtia2i";
    d.hardware_tag_env = "KEVOLVE_MTIA_PROFILE";  // the profile mtia_emu_backend loads
    d.baseline_of = "mtia_emu";
    d.legacy_baseline_key = "mtia_baseline";
    d.roofline_caption =
        "roofline: {:.1f} GB/s (SRAM; DRAM-resident shapes use DRAM's), {:.1f} GFLOP/s (DPE), from the emulator profile";
    d.traits.deterministic_timer = true;
    d.traits.emulated = true;
    rows.push_back(std::move(d));
  }
  return rows;
}

struct registry {
  std::mutex m;
  std::deque<backend_descriptor> rows = builtin_rows();  // a deque: pointers stay valid as rows are added
};

registry& the_registry() {
  static registry r;
  return r;
}

}  // namespace

std::vector<const backend_descriptor*> registered_backends() {
  auto& r = the_registry();
  std::lock_guard<std::mutex> lock(r.m);
  std::vector<const backend_descriptor*> out;
  for (const auto& d : r.rows) out.push_back(&d);
  return out;
}

const backend_descriptor* find_backend(std::string_view name) {
  for (const auto* d : registered_backends())
    if (d->name == name) return d;
  return nullptr;
}

std::string backend_names(const std::function<bool(const backend_descriptor&)>& keep, const char* sep) {
  std::string out;
  for (const auto* d : registered_backends())
    if (!keep || keep(*d)) out += (out.empty() ? "" : sep) + d->name;
  return out;
}

expected<const backend_descriptor*> require_backend(std::string_view name) {
  if (const auto* d = find_backend(name)) return d;
  return make_error(errc::invalid_input,
                    "backend '" + std::string(name) + "' is not known (backends: " + backend_names() + ")");
}

const backend_descriptor& host_backend() {
  for (const auto* d : registered_backends())
    if (d->traits.host) return *d;
  assert(false && "the registry has a host backend");
  std::abort();
}

std::string hardware_tag_of(std::string_view backend) {
  const backend_descriptor* d = find_backend(backend);
  const backend_descriptor& b = d ? *d : host_backend();
  if (!b.hardware_tag_env.empty())
    if (const char* v = std::getenv(b.hardware_tag_env.c_str()); v && *v) return v;
  return b.hardware_tag;
}

expected<const backend_descriptor*> register_backend(backend_descriptor d) {
  if (d.name.empty()) return make_error(errc::invalid_input, "a backend needs a name");
  if (!d.hooks.make)
    return make_error(errc::invalid_input, "backend '" + d.name + "' brings no hooks.make: nothing could compile or run it");
  if (d.traits.host) return make_error(errc::invalid_input, "backend '" + d.name + "': there is one host backend (cpu)");
  if (d.baseline_of.empty()) d.baseline_of = d.name;
  auto& r = the_registry();
  std::lock_guard<std::mutex> lock(r.m);
  for (const auto& x : r.rows)
    if (x.name == d.name) return make_error(errc::invalid_input, "backend '" + d.name + "' is registered already");
  r.rows.push_back(std::move(d));
  return &r.rows.back();
}

}  // namespace kevolve::eval
