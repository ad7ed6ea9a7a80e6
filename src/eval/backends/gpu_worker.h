// The GPU workers' backend (kevolve-cuda-worker, kevolve-hip-worker) for the
// worker skeleton (worker_skeleton.h), written once against a small runtime
// interface `Rt` (cuda_worker_main.cpp and hip_worker_main.cpp define one
// each). The worker owns the device context, keeps a device copy of every
// tensor of every input set and runs kernels on the evaluator's request. It
// never decides a verdict: it moves bytes between the shared regions and the
// device, calls kernels and reports return codes and device-event timings.
// Any device error ends the process (exit 122): a context after an illegal
// address or a trap is unusable, so the evaluator starts a new worker.
//
// usage: <worker> NUM_REGIONS NUM_LIBS ADDRESS_SPACE_BYTES SANDBOX(0|1|2); the
// address-space limit is not applied (the driver maps far more than it uses).
//
// The context, the events and every kernel's module exist before the sandbox
// closes. The thread parker is installed once the context exists and one
// round of the runtime calls a request makes has run, before any candidate
// library is loaded: the runtime's helper threads are then the worker's own
// and never parked, so no device call of the worker can wait on a parked
// one; threads a kernel starts are parked after its call as on the cpu.
// After a call the parker runs before the device copies come back: a thread
// the kernel left cannot launch more work into them.
//
// Rt provides: stream_t, event_t, error_t; kName; ok(e), describe(e);
// device_count, use_device, create_context, malloc, free, upload, download,
// memset_async (on the default stream), event_create, event_record (default
// stream), elapsed_ms, synchronize, last_error; kernel_stream() (what kernels
// get); host_register (page-locks host memory; false where refused, the
// error cleared); before_batch() (before a timed batch) and flush_bytes (a buffer
// rewritten before every timed call, outside its events, to flush caches
// the input rotation cannot; 0: none).
#pragma once

#include <unistd.h>

#include <algorithm>
#include <string>
#include <vector>

#include "eval/worker_skeleton.h"

namespace kevolve::eval::gpu_worker {

inline size_t page_round(size_t n) {
  const size_t page = size_t(::sysconf(_SC_PAGESIZE));
  return (std::max<size_t>(n, 1) + page - 1) / page * page;
}

// A tensor's host bytes (up to its page end, canaries included) and device copy.
struct mirror {
  char* host = nullptr;
  char* dev = nullptr;
  size_t bytes = 0;
  size_t tensor_bytes = 0;
  bool output = false;
};

constexpr uint32_t kEventBatch = 1024;

template <class Rt>
class worker : public worker_backend {
 public:
  using kernel_fn = int (*)(const kv_args*, typename Rt::stream_t);

  static worker_traits traits() {
    worker_traits t;
    t.name = Rt::kName;
    t.limit_address_space = false;
    t.load_before_sandbox = true;
    return t;
  }

  void open(char**) override {
    int devices = 0;
    const auto count = Rt::device_count(&devices);
    if (!Rt::ok(count) || devices == 0)
      fail(wire::kExitSetupFailed, std::string("no device: ") + (!Rt::ok(count) ? Rt::describe(count) : "none found"));
    check(Rt::use_device(0), "selecting the device");
    check(Rt::create_context(), "creating the context");
    start_.resize(kEventBatch);
    stop_.resize(kEventBatch);
    for (uint32_t i = 0; i < kEventBatch; ++i) {
      check(Rt::event_create(&start_[i]), "creating events");
      check(Rt::event_create(&stop_[i]), "creating events");
    }
    if (Rt::flush_bytes) flush_ = device_alloc_persistent(Rt::flush_bytes);
    warm_up();
  }

  // The shared regions page-locked for the device's copy engines: every
  // upload and download of a set is a DMA instead of a staged copy. Where
  // the driver refuses (locked-memory limits), copies stay pageable.
  void before_libraries(worker_core& core) override {
    for (const auto& r : core.regions)
      if (!Rt::host_register(r.base, r.size)) break;
  }

  void loaded(worker_core&) override { check(Rt::synchronize(), "loading the kernels"); }

  bool setup(worker_core& core, const wire::setup_header& h, const std::vector<uint64_t>&) override {
    // Guard pages mean nothing on a device.
    free_device();
    workspace_bytes_ = h.workspace_bytes;
    if (workspace_bytes_) workspace_ = device_alloc(workspace_bytes_);
    mirrors_.assign(core.args.size(), {});
    for (size_t i = 0; i < core.args.size(); ++i) {
      kv_args& a = core.args[i];
      if (a.num_inputs < 0 || a.num_outputs < 0 || a.num_inputs > KV_MAX_TENSORS || a.num_outputs > KV_MAX_TENSORS) return false;
      for (int t = 0; t < a.num_inputs + a.num_outputs; ++t) {
        kv_tensor& k = t < a.num_inputs ? a.inputs[t] : a.outputs[t - a.num_inputs];
        const size_t bytes = page_round(size_t(kv_numel(&k)) * dtype_bytes(k.dtype));
        char* host = core.resolve(reinterpret_cast<uint64_t>(k.data), bytes);
        if (!host) return false;
        mirror m{host, device_alloc(bytes), bytes, size_t(kv_numel(&k)) * dtype_bytes(k.dtype), t >= a.num_inputs};
        k.data = m.dev;
        mirrors_[i].push_back(m);
      }
      a.workspace = workspace_;
      a.workspace_bytes = int64_t(workspace_bytes_);
    }
    // Every set's device copy holds what the region holds now.
    for (const auto& m : mirrors_) upload(m, false);
    return true;
  }

  // CALL or TIME: `reps` calls from `first_set`, rotating over sets; one
  // event pair per call.
  int run(worker_core& core, const wire::request& q, std::vector<int64_t>& ns) override {
    const bool single = q.code == wire::op::call;
    const kernel_fn kernel = core.kernel<kernel_fn>(q.lib);
    // A single call runs on exactly what the shared region holds; a timed
    // batch on the device copies, with the first set's outputs as the region
    // holds them (the evaluator poisons them before a checked batch).
    upload(mirrors_[core.index(q, 0)], !single);
    if (!single) Rt::before_batch();
    check(Rt::synchronize(), "before the kernel ran");
    int first_rc = 0;
    uint32_t done = 0;
    while (done < q.reps && first_rc == 0) {
      const uint32_t n = std::min(kEventBatch, q.reps - done);
      uint32_t launched = 0;
      for (uint32_t i = 0; i < n; ++i) {
        const size_t index = core.index(q, done + i);
        // Every timed call starts from poisoned outputs and (where the
        // runtime asks for it) flushed caches, outside the timed region: a
        // kernel that skips work when its output looks done fails the check
        // after the batch.
        if (!single) {
          for (const auto& m : mirrors_[index])
            if (m.output) check(Rt::memset_async(m.dev, 0xFF, m.tensor_bytes), "poisoning outputs");
          if (flush_) check(Rt::memset_async(flush_, int(done + i) & 0xFF, Rt::flush_bytes), "flushing caches");
        }
        if (workspace_bytes_) check(Rt::memset_async(workspace_, 0xA5, workspace_bytes_), "clearing the workspace");
        check(Rt::event_record(start_[i]), "recording an event");
        const int rc = kernel(&core.args[index], Rt::kernel_stream());
        check(Rt::event_record(stop_[i]), "recording an event");
        ++launched;
        if (rc != 0) {
          first_rc = rc;
          break;
        }
      }
      check(Rt::last_error(), "launching the kernel");
      check(Rt::synchronize(), "running the kernel");
      for (uint32_t i = 0; i < launched; ++i) {
        float ms = 0;
        check(Rt::elapsed_ms(&ms, start_[i], stop_[i]), "reading the timer");
        ns.push_back(int64_t(double(ms) * 1e6));
      }
      done += launched;
    }
    last_ = core.index(q, done - 1);
    return first_rc;
  }

  // The last call's set, once the kernel's threads are parked.
  void after_run(worker_core&, const wire::request&) override { download(mirrors_[last_]); }

  // DOWNLOAD: every set's device copy back into the regions.
  bool serve(worker_core&, const wire::request& q, std::vector<int64_t>&) override {
    if (q.code != wire::op::download) return false;
    for (const auto& m : mirrors_) download(m);
    return true;
  }

 private:
  [[noreturn]] void fail(int code, const std::string& why) { worker_die(Rt::kName, code, why); }
  void check(typename Rt::error_t e, const char* what) {
    if (!Rt::ok(e)) fail(wire::kExitDeviceError, std::string(Rt::kErrorPrefix) + what + ": " + Rt::describe(e));
  }

  // One round of every runtime call a request makes, so that whatever
  // helper threads the runtime starts on first use exist before the parker
  // is installed, not only once a kernel has run.
  void warm_up() {
    char host[64] = {};
    char* dev = device_alloc_persistent(sizeof host);
    check(Rt::upload(dev, host, sizeof host), "copying to the device");
    check(Rt::memset_async(dev, 0xFF, sizeof host), "poisoning outputs");
    check(Rt::event_record(start_[0]), "recording an event");
    check(Rt::event_record(stop_[0]), "recording an event");
    check(Rt::last_error(), "starting up");
    check(Rt::synchronize(), "starting up");
    float ms = 0;
    check(Rt::elapsed_ms(&ms, start_[0], stop_[0]), "reading the timer");
    check(Rt::download(host, dev, sizeof host), "copying from the device");
    Rt::before_batch();
    check(Rt::free(dev), "freeing device buffers");
  }

  char* device_alloc_persistent(size_t bytes) {
    void* p = nullptr;
    check(Rt::malloc(&p, bytes), "allocating device buffers");
    return static_cast<char*>(p);
  }
  char* device_alloc(size_t bytes) {
    char* p = device_alloc_persistent(bytes);
    allocations_.push_back(p);
    return p;
  }
  void free_device() {
    for (void* p : allocations_) check(Rt::free(p), "freeing device buffers");
    allocations_.clear();
    workspace_ = nullptr;
  }

  void upload(const std::vector<mirror>& ms, bool outputs_only) {
    for (const auto& m : ms)
      if (!outputs_only || m.output) check(Rt::upload(m.dev, m.host, m.bytes), "copying to the device");
  }
  void download(const std::vector<mirror>& ms) {
    for (const auto& m : ms) check(Rt::download(m.host, m.dev, m.bytes), "copying from the device");
  }

  std::vector<std::vector<mirror>> mirrors_;  // per args index
  std::vector<void*> allocations_;
  char* workspace_ = nullptr;
  size_t workspace_bytes_ = 0;
  char* flush_ = nullptr;
  size_t last_ = 0;  // args index of the last call made
  std::vector<typename Rt::event_t> start_, stop_;
};

// A GPU worker's main.
template <class Rt>
int run(int argc, char** argv) {
  worker<Rt> backend;
  return run_worker(argc, argv, worker<Rt>::traits(), backend);
}

}  // namespace kevolve::eval::gpu_worker
