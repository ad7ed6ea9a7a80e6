// The start-up and request loop every sandboxed worker shares (kevolve-worker,
// kevolve-mtia-worker, kevolve-cuda-worker, kevolve-hip-worker), with a small
// interface for what a backend does its own way: how a call runs and is
// timed, where tensors live, what else it answers.
//
// usage: <worker> NUM_REGIONS NUM_LIBS ADDRESS_SPACE_BYTES SANDBOX(0|1|2) [backend arguments]
//        (SANDBOX 2: for a profiler: the user kept, writes beneath $TMPDIR only; sandbox.h)
// fds:   3 requests, 4 replies, 5.. regions, then libraries (worker_protocol.h)
//
// Start-up: map the regions; the backend opens its device (before the
// sandbox, which forbids what drivers do at start); the thread parker is
// installed, so threads that exist now are the worker's own; the sandbox
// closes, with the candidate libraries loaded just before it (a GPU runtime
// registers their modules then) or inside it; the process is sealed. Then
// requests are served until QUIT or the pipe closes. Around every CALL and
// TIME the parker lets the kernel's threads run and stops them again before
// the reply (thread_parker.h), on every backend.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "eval/worker_protocol.h"

namespace kevolve::eval {

// Says `why` on stderr as `program` and exits with `code` (worker_protocol.h).
[[noreturn]] void worker_die(const char* program, int code, const std::string& why);

// Bytes per element of a kv_dtype.
size_t dtype_bytes(int32_t dtype);

// What the skeleton keeps for every backend.
struct worker_core {
  struct region {
    char* base = nullptr;
    size_t size = 0;
  };
  std::vector<region> regions;
  std::vector<void*> kernels;  // each library's kevolve_kernel
  uint32_t num_sets = 0;
  // [lib * num_sets + set], from the last SETUP: tensor `data` fields hold
  // encoded region offsets until the backend's setup() replaces them;
  // parameter names point into `names`.
  std::vector<kv_args> args;
  std::vector<std::string> names;

  // The region bytes an encoded offset names, or nullptr when the region
  // does not hold `bytes` from there.
  char* resolve(uint64_t encoded, size_t bytes) const;
  // The args index of call `i` of a CALL/TIME request (rotating over sets).
  size_t index(const wire::request& q, uint32_t i) const {
    return size_t(q.lib) * num_sets + (q.first_set + i) % num_sets;
  }
  template <class Fn>
  Fn kernel(uint32_t lib) const {
    return reinterpret_cast<Fn>(kernels[lib]);
  }
};

// How a backend's worker differs from the others.
struct worker_traits {
  const char* name = "kevolve-worker";  // in messages and the usage line
  const char* extra_usage = "";         // arguments after SANDBOX, e.g. " PROFILE.yaml"
  int extra_args = 0;
  bool populate_regions = false;    // fault every region page in at start
  bool limit_address_space = true;  // RLIMIT_AS from the command line (a GPU driver maps far more than it uses)
  bool load_before_sandbox = false; // dlopen before the sandbox closes (a GPU runtime registers modules then)
};

class worker_backend {
 public:
  virtual ~worker_backend() = default;
  // Before the parker and the sandbox: the device, its context and whatever
  // else must exist before either; `extra` holds the backend's arguments.
  virtual void open(char** extra) { (void)extra; }
  // After open, the regions mapped, before the parker and before the
  // libraries arrive: what a worker started ahead of its candidate does off
  // the candidate's time (a GPU worker pins the regions for fast copies).
  virtual void before_libraries(worker_core& core) { (void)core; }
  // After the candidate libraries are loaded, before the sandbox when they
  // are loaded before it.
  virtual void loaded(worker_core& core) { (void)core; }
  // SETUP, once the skeleton has read the sets, args and names into `core`:
  // place the tensors and the workspace and point args at them. False: a
  // bad request.
  virtual bool setup(worker_core& core, const wire::setup_header& header, const std::vector<uint64_t>& guards) = 0;
  // CALL and TIME (a valid request): q.reps calls, a time in ns per call
  // made; the first non-zero return code, or 0.
  virtual int run(worker_core& core, const wire::request& q, std::vector<int64_t>& ns) = 0;
  // After run(), once every thread the kernel left is parked, before the
  // reply (a GPU worker copies the last call's tensors back then).
  virtual void after_run(worker_core& core, const wire::request& q) {
    (void)core;
    (void)q;
  }
  // Another request code (DOWNLOAD, PROFILE): true with the reply's words,
  // or false for a bad request.
  virtual bool serve(worker_core& core, const wire::request& q, std::vector<int64_t>& words) {
    (void)core;
    (void)q;
    (void)words;
    return false;
  }
};

// The worker's main: never returns on a start-up failure (worker_die).
int run_worker(int argc, char** argv, const worker_traits& traits, worker_backend& backend);

}  // namespace kevolve::eval
