// kevolve-worker: loads kernel libraries inside a sandbox and runs them on
// tensors in shared memory, on the evaluator's request. It never decides a
// verdict: it only calls kernels and reports return codes and timings.
//
// usage: kevolve-worker NUM_REGIONS NUM_LIBS ADDRESS_SPACE_BYTES SANDBOX(0|1|2)
//        (2: for a profiler: the user kept, writes beneath $TMPDIR only; sandbox.h)
// fds:   3 requests, 4 replies, 5.. regions, then libraries (worker_protocol.h)
#include <dlfcn.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "eval/sandbox.h"
#include "eval/fd_io.h"
#include "eval/thread_parker.h"
#include "eval/worker_protocol.h"

namespace {

using namespace kevolve::eval;
using kernel_fn = int (*)(const kv_args*);

[[noreturn]] void die(int code, const std::string& why) {
  std::fprintf(stderr, "kevolve-worker: %s\n", why.c_str());
  std::fflush(stderr);
  ::_exit(code);
}



int64_t now_ns() {
  timespec ts;
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t(ts.tv_sec) * 1000000000LL + ts.tv_nsec;
}

struct region {
  char* base = nullptr;
  size_t size = 0;
};

struct worker_state {
  std::vector<region> regions;
  std::vector<kernel_fn> kernels;
  uint32_t num_sets = 0;
  std::vector<kv_args> args;  // [lib * num_sets + set]
  std::vector<std::string> names;
  std::vector<char*> guards;
  char* workspace = nullptr;
  size_t workspace_bytes = 0;
  size_t workspace_mapped = 0;
};

char* resolve(const worker_state& s, uint64_t encoded, size_t bytes) {
  const uint32_t r = wire::region_of(encoded);
  const uint64_t off = wire::offset_of(encoded);
  if (r >= s.regions.size() || off > s.regions[r].size || bytes > s.regions[r].size - off) return nullptr;
  return s.regions[r].base + off;
}

bool do_setup(worker_state& s, const std::vector<char>& payload) {
  if (payload.size() < sizeof(wire::setup_header)) return false;
  wire::setup_header h;
  std::memcpy(&h, payload.data(), sizeof h);
  const size_t need = sizeof h + size_t(h.num_guards) * 8 + size_t(h.num_libs) * h.num_sets * sizeof(kv_args) + h.names_bytes;
  if (payload.size() != need || h.num_libs != s.kernels.size() || h.num_sets == 0) return false;
  const long page = ::sysconf(_SC_PAGESIZE);
  for (char* g : s.guards) ::mprotect(g, size_t(page), PROT_READ | PROT_WRITE);
  s.guards.clear();
  const char* p = payload.data() + sizeof h;
  for (uint32_t i = 0; i < h.num_guards; ++i, p += 8) {
    uint64_t enc;
    std::memcpy(&enc, p, 8);
    char* g = resolve(s, enc, size_t(page));
    if (!g || ::mprotect(g, size_t(page), PROT_NONE) != 0) return false;
    s.guards.push_back(g);
  }
  s.num_sets = h.num_sets;
  s.args.resize(size_t(h.num_libs) * h.num_sets);
  std::memcpy(s.args.data(), p, s.args.size() * sizeof(kv_args));
  p += s.args.size() * sizeof(kv_args);
  s.names.clear();
  for (const char* q = p; q < p + h.names_bytes; q += std::strlen(q) + 1) s.names.emplace_back(q);
  // Workspace: private memory with a guard page after it.
  if (h.workspace_bytes + size_t(page) > s.workspace_mapped) {
    if (s.workspace) ::munmap(s.workspace, s.workspace_mapped);
    s.workspace_mapped = (h.workspace_bytes + 2 * size_t(page) - 1) / size_t(page) * size_t(page) + size_t(page);
    void* m = ::mmap(nullptr, s.workspace_mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) return false;
    s.workspace = static_cast<char*>(m);
  }
  s.workspace_bytes = h.workspace_bytes;
  ::mprotect(s.workspace + s.workspace_mapped - size_t(page), size_t(page), PROT_NONE);
  for (auto& a : s.args) {
    for (int i = 0; i < a.num_inputs + a.num_outputs; ++i) {
      kv_tensor& t = i < a.num_inputs ? a.inputs[i] : a.outputs[i - a.num_inputs];
      char* ptr = resolve(s, reinterpret_cast<uint64_t>(t.data), 0);
      if (!ptr) return false;
      t.data = ptr;
    }
    for (int i = 0; i < a.num_params; ++i)
      a.params[i].name = size_t(i) < s.names.size() ? s.names[size_t(i)].c_str() : "";
    a.workspace = s.workspace_bytes ? s.workspace : nullptr;
    a.workspace_bytes = int64_t(s.workspace_bytes);
  }
  return true;
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

void do_run(worker_state& s, const wire::request& q) {
  if (q.lib >= s.kernels.size() || s.num_sets == 0 || q.reps == 0) {
    send_reply(q.nonce, wire::reply_status::bad_request, 0, {});
    return;
  }
  thread_parker::release();
  std::vector<int64_t> ns;
  ns.reserve(q.reps);
  int first_rc = 0;
  for (uint32_t i = 0; i < q.reps; ++i) {
    const kv_args& a = s.args[size_t(q.lib) * s.num_sets + (q.first_set + i) % s.num_sets];
    if (s.workspace_bytes) std::memset(s.workspace, 0xA5, s.workspace_bytes);  // no state in scratch
    const int64_t t0 = now_ns();
    const int rc = s.kernels[q.lib](&a);
    const int64_t t1 = now_ns();
    ns.push_back(t1 - t0);
    if (rc != 0 && first_rc == 0) first_rc = rc;
    if (rc != 0) break;
  }
  // Nothing the kernel left running may advance while its outputs are read.
  if (!thread_parker::park_after_call("kevolve-worker", wire::kParkDeadline)) {
    send_reply(q.nonce, wire::reply_status::left_running, 0, ns);
    return;
  }
  send_reply(q.nonce, first_rc ? wire::reply_status::kernel_error : wire::reply_status::ok, first_rc, ns);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 5) die(wire::kExitSetupFailed, "usage: kevolve-worker NUM_REGIONS NUM_LIBS ADDRESS_SPACE_BYTES SANDBOX");
  const int num_regions = std::atoi(argv[1]);
  const int num_libs = std::atoi(argv[2]);
  const unsigned long long as_bytes = std::strtoull(argv[3], nullptr, 10);
  const int sandbox_mode = std::atoi(argv[4]);
  if (num_regions < 1 || num_regions > wire::kMaxRegions || num_libs < 1 || num_libs > wire::kMaxLibs)
    die(wire::kExitSetupFailed, "bad region or library count");

  worker_state s;
  for (int i = 0; i < num_regions; ++i) {
    struct stat st;
    const int fd = wire::kFirstRegionFd + i;
    if (::fstat(fd, &st) != 0) die(wire::kExitSetupFailed, "region fd " + std::to_string(fd) + " is not open");
    // Populate the page tables now rather than fault page by page in the
    // first timed calls.
    void* m = ::mmap(nullptr, size_t(st.st_size), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0);
    if (m == MAP_FAILED) die(wire::kExitSetupFailed, std::string("mmap region: ") + std::strerror(errno));
    ::close(fd);
    s.regions.push_back({static_cast<char*>(m), size_t(st.st_size)});
  }

  const std::string parker = thread_parker::install();
  if (!parker.empty()) die(wire::kExitSetupFailed, parker);
  sandbox_options opts = sandbox_for_mode(sandbox_mode);
  opts.address_space_bytes = as_bytes;
  opts.reserved_signal = thread_parker::signal_number();
  const std::string err = enter_sandbox(opts);
  if (!err.empty()) die(wire::kExitSandboxFailed, err);

  for (int i = 0; i < num_libs; ++i) {
    const std::string path = "/proc/self/fd/" + std::to_string(wire::kFirstLibFd + i);
    void* h = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!h) die(wire::kExitSetupFailed, std::string("dlopen: ") + ::dlerror());
    auto fn = reinterpret_cast<kernel_fn>(::dlsym(h, "kevolve_kernel"));
    if (!fn) die(wire::kExitSetupFailed, "library " + std::to_string(i) + " has no kevolve_kernel");
    s.kernels.push_back(fn);
    ::close(wire::kFirstLibFd + i);
  }
  seal_process();

  for (;;) {
    wire::request q;
    if (!read_all(wire::kRequestFd, &q, sizeof q)) return 0;
    if (q.magic != wire::kMagic) die(wire::kExitSetupFailed, "bad request magic");
    switch (q.code) {
      case wire::op::setup: {
        std::vector<char> payload(q.payload_bytes);
        if (!read_all(wire::kRequestFd, payload.data(), payload.size())) return 0;
        send_reply(q.nonce, do_setup(s, payload) ? wire::reply_status::ok : wire::reply_status::bad_request, 0, {});
        break;
      }
      case wire::op::call:
      case wire::op::time: do_run(s, q); break;
      case wire::op::quit: return 0;
      default: send_reply(q.nonce, wire::reply_status::bad_request, 0, {});
    }
  }
}
