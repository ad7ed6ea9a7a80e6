// The body of the GPU workers (kevolve-cuda-worker, kevolve-hip-worker),
// written once against a small runtime interface `Rt` (cuda_worker_main.cpp
// and hip_worker_main.cpp define one each). The worker owns the device
// context, loads candidate libraries, keeps a device copy of every tensor
// of every input set and runs kernels on the evaluator's request. It never
// decides a verdict: it moves bytes between the shared regions and the
// device, calls kernels and reports return codes and device-event timings.
// Any device error ends the process (exit 122): a context after an illegal
// address or a trap is unusable, so the evaluator starts a new worker.
//
// usage: <worker> NUM_REGIONS NUM_LIBS ADDRESS_SPACE_BYTES SANDBOX(0|1|2)
//        (2: for a profiler: the user kept, writes beneath $TMPDIR only; sandbox.h)
// fds:   as kevolve-worker (worker_protocol.h)
//
// Rt provides: stream_t, event_t, error_t; kName; ok(e), describe(e);
// device_count, use_device, create_context, malloc, free, upload, download,
// memset_async (on the default stream), event_create, event_record (default
// stream), elapsed_ms, synchronize, last_error; kernel_stream() (what kernels
// get); before_batch() (before a timed batch) and flush_bytes (a buffer
// rewritten before every timed call, outside its events, to flush caches
// the input rotation cannot; 0: none).
#pragma once

#include <dlfcn.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "eval/fd_io.h"
#include "eval/sandbox.h"
#include "eval/worker_protocol.h"

namespace kevolve::eval::gpu_worker {

[[noreturn]] inline void die(const char* name, int code, const std::string& why) {
  std::fprintf(stderr, "%s: %s\n", name, why.c_str());
  std::fflush(stderr);
  ::_exit(code);
}

inline size_t dtype_size(int32_t t) {
  switch (t) {
    case KV_F16:
    case KV_BF16: return 2;
    case KV_I64:
    case KV_F64: return 8;
    case KV_U8: return 1;
    default: return 4;
  }
}

inline size_t page_round(size_t n) {
  const size_t page = size_t(::sysconf(_SC_PAGESIZE));
  return (std::max<size_t>(n, 1) + page - 1) / page * page;
}

struct region {
  char* base = nullptr;
  size_t size = 0;
};

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
class worker {
 public:
  using kernel_fn = int (*)(const kv_args*, typename Rt::stream_t);

  int main(int argc, char** argv) {
    if (argc != 5) fail(wire::kExitSetupFailed, "usage: " + std::string(Rt::kName) + " NUM_REGIONS NUM_LIBS ADDRESS_SPACE_BYTES SANDBOX");
    const int num_regions = std::atoi(argv[1]);
    const int num_libs = std::atoi(argv[2]);
    const int sandbox_mode = std::atoi(argv[4]);
    if (num_regions < 1 || num_regions > wire::kMaxRegions || num_libs < 1 || num_libs > wire::kMaxLibs)
      fail(wire::kExitSetupFailed, "bad region or library count");
    map_regions(num_regions);
    // The context, the events and every kernel's module exist before the sandbox closes.
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
    load_kernels(num_libs);
    check(Rt::synchronize(), "loading the kernels");

    sandbox_options opts = sandbox_for_mode(sandbox_mode);
    opts.address_space_bytes = 0;  // the driver maps far more address space than it uses
    const std::string err = enter_sandbox(opts);
    if (!err.empty()) fail(wire::kExitSandboxFailed, err);
    seal_process();
    return serve();
  }

 private:
  [[noreturn]] void fail(int code, const std::string& why) { die(Rt::kName, code, why); }
  void check(typename Rt::error_t e, const char* what) {
    if (!Rt::ok(e)) fail(wire::kExitDeviceError, std::string(Rt::kErrorPrefix) + what + ": " + Rt::describe(e));
  }

  void map_regions(int n) {
    for (int i = 0; i < n; ++i) {
      struct stat st;
      const int fd = wire::kFirstRegionFd + i;
      if (::fstat(fd, &st) != 0) fail(wire::kExitSetupFailed, "region fd " + std::to_string(fd) + " is not open");
      void* m = ::mmap(nullptr, size_t(st.st_size), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
      if (m == MAP_FAILED) fail(wire::kExitSetupFailed, std::string("mmap region: ") + std::strerror(errno));
      ::close(fd);
      regions_.push_back({static_cast<char*>(m), size_t(st.st_size)});
    }
  }

  void load_kernels(int n) {
    for (int i = 0; i < n; ++i) {
      const std::string path = "/proc/self/fd/" + std::to_string(wire::kFirstLibFd + i);
      void* h = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (!h) fail(wire::kExitSetupFailed, std::string("dlopen: ") + ::dlerror());
      auto fn = reinterpret_cast<kernel_fn>(::dlsym(h, "kevolve_kernel"));
      if (!fn) fail(wire::kExitSetupFailed, "library " + std::to_string(i) + " has no kevolve_kernel");
      kernels_.push_back(fn);
      ::close(wire::kFirstLibFd + i);
    }
  }

  char* resolve(uint64_t encoded, size_t bytes) const {
    const uint32_t r = wire::region_of(encoded);
    const uint64_t off = wire::offset_of(encoded);
    if (r >= regions_.size() || off > regions_[r].size || bytes > regions_[r].size - off) return nullptr;
    return regions_[r].base + off;
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

  bool setup(const std::vector<char>& payload) {
    if (payload.size() < sizeof(wire::setup_header)) return false;
    wire::setup_header h;
    std::memcpy(&h, payload.data(), sizeof h);
    const size_t need = sizeof h + size_t(h.num_guards) * 8 + size_t(h.num_libs) * h.num_sets * sizeof(kv_args) + h.names_bytes;
    if (payload.size() != need || h.num_libs != kernels_.size() || h.num_sets == 0) return false;
    const char* p = payload.data() + sizeof h + size_t(h.num_guards) * 8;  // guard pages mean nothing on a device
    free_device();
    num_sets_ = h.num_sets;
    args_.resize(size_t(h.num_libs) * h.num_sets);
    std::memcpy(args_.data(), p, args_.size() * sizeof(kv_args));
    p += args_.size() * sizeof(kv_args);
    names_.clear();
    for (const char* q = p; q < p + h.names_bytes; q += std::strlen(q) + 1) names_.emplace_back(q);
    workspace_bytes_ = h.workspace_bytes;
    if (workspace_bytes_) workspace_ = device_alloc(workspace_bytes_);
    mirrors_.assign(args_.size(), {});
    for (size_t i = 0; i < args_.size(); ++i) {
      kv_args& a = args_[i];
      if (a.num_inputs < 0 || a.num_outputs < 0 || a.num_inputs > KV_MAX_TENSORS || a.num_outputs > KV_MAX_TENSORS) return false;
      for (int t = 0; t < a.num_inputs + a.num_outputs; ++t) {
        kv_tensor& k = t < a.num_inputs ? a.inputs[t] : a.outputs[t - a.num_inputs];
        const size_t bytes = page_round(size_t(kv_numel(&k)) * dtype_size(k.dtype));
        char* host = resolve(reinterpret_cast<uint64_t>(k.data), bytes);
        if (!host) return false;
        mirror m{host, device_alloc(bytes), bytes, size_t(kv_numel(&k)) * dtype_size(k.dtype), t >= a.num_inputs};
        k.data = m.dev;
        mirrors_[i].push_back(m);
      }
      for (int j = 0; j < a.num_params; ++j) a.params[j].name = size_t(j) < names_.size() ? names_[size_t(j)].c_str() : "";
      a.workspace = workspace_;
      a.workspace_bytes = int64_t(workspace_bytes_);
    }
    return true;
  }

  void upload(const std::vector<mirror>& ms, bool outputs_only) {
    for (const auto& m : ms)
      if (!outputs_only || m.output) check(Rt::upload(m.dev, m.host, m.bytes), "copying to the device");
  }
  void download(const std::vector<mirror>& ms) {
    for (const auto& m : ms) check(Rt::download(m.host, m.dev, m.bytes), "copying from the device");
  }

  void reply(uint64_t nonce, wire::reply_status st, int rc, const std::vector<int64_t>& ns) {
    wire::reply r;
    r.nonce = nonce;
    r.status = st;
    r.rc = rc;
    r.count = uint32_t(ns.size());
    if (!write_all(wire::kReplyFd, &r, sizeof r) ||
        (!ns.empty() && !write_all(wire::kReplyFd, ns.data(), ns.size() * sizeof(int64_t))))
      ::_exit(0);  // evaluator went away
  }

  // Runs `reps` calls from `first_set`, rotating over sets; one event pair per call.
  void run(const wire::request& q, bool single) {
    if (q.lib >= kernels_.size() || num_sets_ == 0 || q.reps == 0) {
      reply(q.nonce, wire::reply_status::bad_request, 0, {});
      return;
    }
    const auto index = [&](uint32_t i) { return size_t(q.lib) * num_sets_ + (q.first_set + i) % num_sets_; };
    // A single call runs on exactly what the shared region holds; a timed
    // batch on the device copies, with the first set's outputs as the region
    // holds them (the evaluator poisons them before a checked batch).
    upload(mirrors_[index(0)], !single);
    if (!single) Rt::before_batch();
    check(Rt::synchronize(), "before the kernel ran");
    std::vector<int64_t> ns;
    ns.reserve(q.reps);
    int first_rc = 0;
    uint32_t done = 0;
    while (done < q.reps && first_rc == 0) {
      const uint32_t n = std::min(kEventBatch, q.reps - done);
      uint32_t launched = 0;
      for (uint32_t i = 0; i < n; ++i) {
        const kv_args& a = args_[index(done + i)];
        // Every timed call starts from poisoned outputs and (where the
        // runtime asks for it) flushed caches, outside the timed region: a
        // kernel that skips work when its output looks done fails the check
        // after the batch.
        if (!single) {
          for (const auto& m : mirrors_[index(done + i)])
            if (m.output) check(Rt::memset_async(m.dev, 0xFF, m.tensor_bytes), "poisoning outputs");
          if (flush_) check(Rt::memset_async(flush_, int(done + i) & 0xFF, Rt::flush_bytes), "flushing caches");
        }
        if (workspace_bytes_) check(Rt::memset_async(workspace_, 0xA5, workspace_bytes_), "clearing the workspace");
        check(Rt::event_record(start_[i]), "recording an event");
        const int rc = kernels_[q.lib](&a, Rt::kernel_stream());
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
    download(mirrors_[index(done == 0 ? 0 : done - 1)]);
    reply(q.nonce, first_rc ? wire::reply_status::kernel_error : wire::reply_status::ok, first_rc, ns);
  }

  int serve() {
    for (;;) {
      wire::request q;
      if (!read_all(wire::kRequestFd, &q, sizeof q)) return 0;
      if (q.magic != wire::kMagic) fail(wire::kExitSetupFailed, "bad request magic");
      switch (q.code) {
        case wire::op::setup: {
          std::vector<char> payload(q.payload_bytes);
          if (!read_all(wire::kRequestFd, payload.data(), payload.size())) return 0;
          const bool ok = setup(payload);
          if (ok)  // every set's device copy holds what the region holds now
            for (const auto& m : mirrors_) upload(m, false);
          reply(q.nonce, ok ? wire::reply_status::ok : wire::reply_status::bad_request, 0, {});
          break;
        }
        case wire::op::call: run(q, true); break;
        case wire::op::time: run(q, false); break;
        case wire::op::download: {
          for (const auto& m : mirrors_) download(m);
          reply(q.nonce, wire::reply_status::ok, 0, {});
          break;
        }
        case wire::op::quit: return 0;
        default: reply(q.nonce, wire::reply_status::bad_request, 0, {});
      }
    }
  }

  std::vector<region> regions_;
  std::vector<kernel_fn> kernels_;
  uint32_t num_sets_ = 0;
  std::vector<kv_args> args_;                // [lib * num_sets + set], device pointers
  std::vector<std::vector<mirror>> mirrors_;  // same index
  std::vector<std::string> names_;
  std::vector<void*> allocations_;
  char* workspace_ = nullptr;
  size_t workspace_bytes_ = 0;
  char* flush_ = nullptr;
  std::vector<typename Rt::event_t> start_, stop_;
};

}  // namespace kevolve::eval::gpu_worker
