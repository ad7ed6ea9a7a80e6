// kevolve-cuda-worker: the GPU counterpart of kevolve-worker. It owns the
// CUDA context, loads candidate libraries, keeps a device copy of every
// tensor of every input set and runs kernels on the evaluator's request. It
// never decides a verdict: it moves bytes between the shared regions and the
// device, calls kernels and reports return codes and CUDA-event timings.
// Any CUDA error ends the process (exit 122): a context after an illegal
// address or a trap is unusable, so the evaluator starts a new worker.
//
// usage: kevolve-cuda-worker NUM_REGIONS NUM_LIBS ADDRESS_SPACE_BYTES SANDBOX(0|1)
// fds:   as kevolve-worker (worker_protocol.h)
//
// Timing: the kernel gets the legacy default stream (cudaStreamLegacy) and
// each call is bracketed by events recorded on it, so the end event completes
// only after every blocking stream's work, the per-thread default stream's
// included (creating other streams is refused statically); a batch ends with
// cudaDeviceSynchronize before replying. An event pair on a stream of its own
// would add a cross-stream dependency of several microseconds to every call.
#include <cuda_runtime.h>
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

namespace {

using namespace kevolve::eval;
using kernel_fn = int (*)(const kv_args*, cudaStream_t);

[[noreturn]] void die(int code, const std::string& why) {
  std::fprintf(stderr, "kevolve-cuda-worker: %s\n", why.c_str());
  std::fflush(stderr);
  ::_exit(code);
}

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess)
    die(wire::kExitDeviceError, std::string("CUDA error ") + what + ": " + cudaGetErrorName(e) + ": " + cudaGetErrorString(e));
}

size_t dtype_size(int32_t t) {
  switch (t) {
    case KV_F16:
    case KV_BF16: return 2;
    case KV_I64:
    case KV_F64: return 8;
    case KV_U8: return 1;
    default: return 4;
  }
}

size_t page_round(size_t n) {
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

struct worker_state {
  std::vector<region> regions;
  std::vector<kernel_fn> kernels;
  uint32_t num_sets = 0;
  std::vector<kv_args> args;                // [lib * num_sets + set], device pointers
  std::vector<std::vector<mirror>> mirrors;  // same index
  std::vector<std::string> names;
  std::vector<void*> allocations;
  char* workspace = nullptr;
  size_t workspace_bytes = 0;
  cudaStream_t stream = nullptr;
  std::vector<cudaEvent_t> start, stop;
};

char* resolve(const worker_state& s, uint64_t encoded, size_t bytes) {
  const uint32_t r = wire::region_of(encoded);
  const uint64_t off = wire::offset_of(encoded);
  if (r >= s.regions.size() || off > s.regions[r].size || bytes > s.regions[r].size - off) return nullptr;
  return s.regions[r].base + off;
}

void free_device(worker_state& s) {
  for (void* p : s.allocations) check(cudaFree(p), "freeing device buffers");
  s.allocations.clear();
  s.workspace = nullptr;
}

char* device_alloc(worker_state& s, size_t bytes) {
  void* p = nullptr;
  check(cudaMalloc(&p, bytes), "allocating device buffers");
  s.allocations.push_back(p);
  return static_cast<char*>(p);
}

bool do_setup(worker_state& s, const std::vector<char>& payload) {
  if (payload.size() < sizeof(wire::setup_header)) return false;
  wire::setup_header h;
  std::memcpy(&h, payload.data(), sizeof h);
  const size_t need = sizeof h + size_t(h.num_guards) * 8 + size_t(h.num_libs) * h.num_sets * sizeof(kv_args) + h.names_bytes;
  if (payload.size() != need || h.num_libs != s.kernels.size() || h.num_sets == 0) return false;
  const char* p = payload.data() + sizeof h + size_t(h.num_guards) * 8;  // guard pages mean nothing on a device
  free_device(s);
  s.num_sets = h.num_sets;
  s.args.resize(size_t(h.num_libs) * h.num_sets);
  std::memcpy(s.args.data(), p, s.args.size() * sizeof(kv_args));
  p += s.args.size() * sizeof(kv_args);
  s.names.clear();
  for (const char* q = p; q < p + h.names_bytes; q += std::strlen(q) + 1) s.names.emplace_back(q);
  s.workspace_bytes = h.workspace_bytes;
  if (s.workspace_bytes) s.workspace = device_alloc(s, s.workspace_bytes);
  s.mirrors.assign(s.args.size(), {});
  for (size_t i = 0; i < s.args.size(); ++i) {
    kv_args& a = s.args[i];
    if (a.num_inputs < 0 || a.num_outputs < 0 || a.num_inputs > KV_MAX_TENSORS || a.num_outputs > KV_MAX_TENSORS) return false;
    for (int t = 0; t < a.num_inputs + a.num_outputs; ++t) {
      kv_tensor& k = t < a.num_inputs ? a.inputs[t] : a.outputs[t - a.num_inputs];
      const size_t bytes = page_round(size_t(kv_numel(&k)) * dtype_size(k.dtype));
      char* host = resolve(s, reinterpret_cast<uint64_t>(k.data), bytes);
      if (!host) return false;
      mirror m{host, device_alloc(s, bytes), bytes, size_t(kv_numel(&k)) * dtype_size(k.dtype), t >= a.num_inputs};
      k.data = m.dev;
      s.mirrors[i].push_back(m);
    }
    for (int j = 0; j < a.num_params; ++j) a.params[j].name = size_t(j) < s.names.size() ? s.names[size_t(j)].c_str() : "";
    a.workspace = s.workspace;
    a.workspace_bytes = int64_t(s.workspace_bytes);
  }
  return true;
}

void upload(const std::vector<mirror>& ms, bool outputs_only) {
  for (const auto& m : ms)
    if (!outputs_only || m.output) check(cudaMemcpy(m.dev, m.host, m.bytes, cudaMemcpyHostToDevice), "copying to the device");
}

void download(const std::vector<mirror>& ms) {
  for (const auto& m : ms) check(cudaMemcpy(m.host, m.dev, m.bytes, cudaMemcpyDeviceToHost), "copying from the device");
}

void send_reply(uint64_t nonce, wire::reply_status st, int rc, const std::vector<int64_t>& ns) {
  wire::reply r;
  r.nonce = nonce;
  r.status = st;
  r.rc = rc;
  r.count = uint32_t(ns.size());
  if (!write_all(wire::kReplyFd, &r, sizeof r) ||
      (!ns.empty() && !write_all(wire::kReplyFd, ns.data(), ns.size() * sizeof(int64_t))))
    ::_exit(0);  // evaluator went away
}

// No L2 lines kept persistent by anyone before a timed batch.
void reset_l2_persistence(worker_state& s) {
  cudaStreamAttrValue v;
  std::memset(&v, 0, sizeof v);
  v.accessPolicyWindow.num_bytes = 0;
  v.accessPolicyWindow.hitProp = cudaAccessPropertyNormal;
  v.accessPolicyWindow.missProp = cudaAccessPropertyNormal;
  cudaStreamSetAttribute(s.stream, cudaStreamAttributeAccessPolicyWindow, &v);
  cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, 0);
  cudaCtxResetPersistingL2Cache();
  (void)cudaGetLastError();  // unsupported on some devices: not an error of the kernel
}

// Runs `reps` calls from `first_set`, rotating over sets; one event pair per call.
void do_run(worker_state& s, const wire::request& q, bool single) {
  if (q.lib >= s.kernels.size() || s.num_sets == 0 || q.reps == 0) {
    send_reply(q.nonce, wire::reply_status::bad_request, 0, {});
    return;
  }
  const auto index = [&](uint32_t i) { return size_t(q.lib) * s.num_sets + (q.first_set + i) % s.num_sets; };
  // A single call runs on exactly what the shared region holds; a timed
  // batch on the device copies, with the first set's outputs as the region
  // holds them (the evaluator poisons them before a checked batch).
  upload(s.mirrors[index(0)], !single);
  if (!single) reset_l2_persistence(s);
  check(cudaDeviceSynchronize(), "before the kernel ran");
  std::vector<int64_t> ns;
  ns.reserve(q.reps);
  int first_rc = 0;
  uint32_t done = 0;
  while (done < q.reps && first_rc == 0) {
    const uint32_t n = std::min(kEventBatch, q.reps - done);
    uint32_t launched = 0;
    for (uint32_t i = 0; i < n; ++i) {
      const kv_args& a = s.args[index(done + i)];
      // Every timed call starts from poisoned outputs (outside the timed
      // region): a kernel that skips work when its output looks done fails
      // the check after the batch.
      if (!single)
        for (const auto& m : s.mirrors[index(done + i)])
          if (m.output) check(cudaMemsetAsync(m.dev, 0xFF, m.tensor_bytes, nullptr), "poisoning outputs");
      if (s.workspace_bytes) check(cudaMemsetAsync(s.workspace, 0xA5, s.workspace_bytes, nullptr), "clearing the workspace");
      check(cudaEventRecord(s.start[i], nullptr), "recording an event");
      const int rc = s.kernels[q.lib](&a, s.stream);
      check(cudaEventRecord(s.stop[i], nullptr), "recording an event");
      ++launched;
      if (rc != 0) {
        first_rc = rc;
        break;
      }
    }
    check(cudaGetLastError(), "launching the kernel");
    check(cudaDeviceSynchronize(), "running the kernel");
    for (uint32_t i = 0; i < launched; ++i) {
      float ms = 0;
      check(cudaEventElapsedTime(&ms, s.start[i], s.stop[i]), "reading the timer");
      ns.push_back(int64_t(double(ms) * 1e6));
    }
    done += launched;
  }
  download(s.mirrors[index(done == 0 ? 0 : done - 1)]);
  send_reply(q.nonce, first_rc ? wire::reply_status::kernel_error : wire::reply_status::ok, first_rc, ns);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 5) die(wire::kExitSetupFailed, "usage: kevolve-cuda-worker NUM_REGIONS NUM_LIBS ADDRESS_SPACE_BYTES SANDBOX");
  const int num_regions = std::atoi(argv[1]);
  const int num_libs = std::atoi(argv[2]);
  const bool sandbox = std::atoi(argv[4]) != 0;
  if (num_regions < 1 || num_regions > wire::kMaxRegions || num_libs < 1 || num_libs > wire::kMaxLibs)
    die(wire::kExitSetupFailed, "bad region or library count");

  worker_state s;
  for (int i = 0; i < num_regions; ++i) {
    struct stat st;
    const int fd = wire::kFirstRegionFd + i;
    if (::fstat(fd, &st) != 0) die(wire::kExitSetupFailed, "region fd " + std::to_string(fd) + " is not open");
    void* m = ::mmap(nullptr, size_t(st.st_size), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (m == MAP_FAILED) die(wire::kExitSetupFailed, std::string("mmap region: ") + std::strerror(errno));
    ::close(fd);
    s.regions.push_back({static_cast<char*>(m), size_t(st.st_size)});
  }

  // The context, the events and every kernel's module exist
  // before the sandbox closes.
  int devices = 0;
  const cudaError_t count = cudaGetDeviceCount(&devices);
  if (count != cudaSuccess || devices == 0)
    die(wire::kExitSetupFailed, std::string("no CUDA device: ") + (count != cudaSuccess ? cudaGetErrorString(count) : "none found"));
  check(cudaSetDevice(0), "selecting the device");
  check(cudaFree(nullptr), "creating the context");
  s.stream = cudaStreamLegacy;
  s.start.resize(kEventBatch);
  s.stop.resize(kEventBatch);
  for (uint32_t i = 0; i < kEventBatch; ++i) {
    check(cudaEventCreate(&s.start[i]), "creating events");
    check(cudaEventCreate(&s.stop[i]), "creating events");
  }
  for (int i = 0; i < num_libs; ++i) {
    const std::string path = "/proc/self/fd/" + std::to_string(wire::kFirstLibFd + i);
    void* h = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!h) die(wire::kExitSetupFailed, std::string("dlopen: ") + ::dlerror());
    auto fn = reinterpret_cast<kernel_fn>(::dlsym(h, "kevolve_kernel"));
    if (!fn) die(wire::kExitSetupFailed, "library " + std::to_string(i) + " has no kevolve_kernel");
    s.kernels.push_back(fn);
    ::close(wire::kFirstLibFd + i);
  }
  check(cudaDeviceSynchronize(), "loading the kernels");

  sandbox_options opts;
  opts.address_space_bytes = 0;  // the driver maps far more address space than it uses
  opts.drop_privileges = sandbox;
  opts.seccomp = sandbox;
  const std::string err = enter_sandbox(opts);
  if (!err.empty()) die(wire::kExitSandboxFailed, err);
  seal_process();

  for (;;) {
    wire::request q;
    if (!read_all(wire::kRequestFd, &q, sizeof q)) return 0;
    if (q.magic != wire::kMagic) die(wire::kExitSetupFailed, "bad request magic");
    switch (q.code) {
      case wire::op::setup: {
        std::vector<char> payload(q.payload_bytes);
        if (!read_all(wire::kRequestFd, payload.data(), payload.size())) return 0;
        const bool ok = do_setup(s, payload);
        if (ok)  // every set's device copy holds what the region holds now
          for (const auto& m : s.mirrors) upload(m, false);
        send_reply(q.nonce, ok ? wire::reply_status::ok : wire::reply_status::bad_request, 0, {});
        break;
      }
      case wire::op::call: do_run(s, q, true); break;
      case wire::op::time: do_run(s, q, false); break;
      case wire::op::download: {
        for (const auto& m : s.mirrors) download(m);
        send_reply(q.nonce, wire::reply_status::ok, 0, {});
        break;
      }
      case wire::op::quit: return 0;
      default: send_reply(q.nonce, wire::reply_status::bad_request, 0, {});
    }
  }
}
