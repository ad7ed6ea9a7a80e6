// The backend registry: one descriptor per backend, owning everything that
// differs between backends and that other components need to know — name,
// language, source file, ABI signature, hardware knowledge tag, the device
// variable that pins a rank's GPU, its baseline, PyTorch's device, which
// vendor libraries its compile recipe links, and its traits. No component
// outside src/eval/backends/ compares a backend name with a literal; it asks
// the registry (BackendRegistry.NoComponentComparesABackendNameWithALiteral
// in tests/unit/eval/backend_registry_test.cpp enforces it).
//
// This library sits below every other component (it uses only common), so
// the spec loaders, the synthesizers and the CLI can read it. What a backend
// *does* (compile, run, probe the hardware) lives in kevolve_eval: built-in
// backends' behaviour is the implementation table in backend.cpp; a backend
// added at run time (register_backend, e.g. by a test) brings its own hooks.
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/error.h"

namespace kevolve::spec {
struct hardware_profile;
}

namespace kevolve::eval {

class backend;

struct backend_traits {
  // The kernel's time depends only on what it does (an emulator's cycles).
  bool deterministic_timer = false;
  // Candidates are verified, never timed (correctness on another device).
  bool verify_only = false;
  // Each rank of this backend is pinned to one device (device_env).
  bool uses_device = false;
  // Nsight Compute profiles its improved kernels.
  bool ncu_profiles = false;
  // A sweep may list it (false: `kevolve eval --backend` only).
  bool sweepable = true;
  // The host backend: its baseline is required of every operator and stands
  // in for the reference at large shapes; the reference compiles with it.
  bool host = false;
  // The hardware profile depends on the evaluator's thread count.
  bool profile_per_thread_count = false;
  // Its hardware profile comes from an emulator profile file (config/hardware/).
  bool emulated = false;
};

// Behaviour, for a backend added at run time; built-ins leave these empty
// (kevolve_eval has their implementations).
struct backend_hooks {
  std::function<std::unique_ptr<backend>(std::chrono::seconds compile_timeout)> make;
  std::function<expected<spec::hardware_profile>(int threads)> hardware;
  // Success: this node can evaluate it; else why not (`kevolve run` refuses it).
  std::function<expected<void>()> usable;
};

struct backend_descriptor {
  std::string name;              // "cpu"
  std::string language;          // "C++", "CUDA C++"
  std::string source_name;       // what compiler messages call a candidate: "kernel.cpp"
  std::string abi_signature;     // the entry point prompts show
  // Text the entry point's second argument must contain and what it is, for
  // replies checked before evaluation ("Stream_t", "the stream"); empty: none.
  std::string abi_marker;
  std::string abi_marker_meaning;
  std::string hardware_tag;      // knowledge/hardware/<tag>: prompts, skills
  // The variable that, when set, names the hardware instead of hardware_tag
  // (mtia_emu: KEVOLVE_MTIA_PROFILE, the emulator profile in use); empty: none.
  std::string hardware_tag_env;
  std::string device_env;        // the variable pinning a rank's device, e.g. CUDA_VISIBLE_DEVICES
  // Whose baseline candidates are timed against ("cuda" for hip_on_cuda);
  // the operator YAML's `baselines.<name>`.
  std::string baseline_of;
  // The pre-registry operator YAML key of this backend's baseline
  // ("cuda_baseline"), still read with a deprecation note; empty: none.
  std::string legacy_baseline_key;
  std::vector<std::string> linkable_libraries;  // names its compile recipe links
  std::string torch_device;      // PyTorch's device for the yardstick; empty: no PyTorch
  bool torch_compile = false;    // torch.compile timed beside eager
  bool torch_by_default = false; // PyTorch timed unless the evaluator is told not to
  // The verdict table's roofline line: a fmt format of peak GB/s and GFLOP/s.
  std::string roofline_caption = "roofline: {:.1f} GB/s, {:.1f} GFLOP/s fp32 (measured)";
  std::string verdict_note;      // printed under a verdict of this backend; empty: none
  std::string verify_only_reason;// appended to "verified only, never timed"
  backend_traits traits;
  backend_hooks hooks;
};

// Every registered backend, built-ins first, in registration order.
std::vector<const backend_descriptor*> registered_backends();
// nullptr when no backend has this name.
const backend_descriptor* find_backend(std::string_view name);
// The descriptor, or an error naming the known backends.
expected<const backend_descriptor*> require_backend(std::string_view name);
// "cpu, cuda, hip, mtia_emu": the names of the backends `keep` accepts, in order.
std::string backend_names(const std::function<bool(const backend_descriptor&)>& keep = {}, const char* sep = ", ");
// The one host backend (traits.host).
const backend_descriptor& host_backend();
// The knowledge tag of a backend's hardware (knowledge/hardware/): its
// hardware_tag_env's value where set, else its hardware_tag; the host's for
// a name no backend has.
std::string hardware_tag_of(std::string_view backend);
// Adds a backend; an error when its name is taken or empty, or when it
// brings no hooks.make (a run-time backend must say how it compiles and runs).
expected<const backend_descriptor*> register_backend(backend_descriptor d);

}  // namespace kevolve::eval
