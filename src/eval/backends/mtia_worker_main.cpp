// kevolve-mtia-worker: the mtia_emu counterpart of kevolve-worker. It owns
// one emulated MTIA-like device (src/emu/mtia), loads candidate libraries
// and runs them inside the emulator on the evaluator's request. It never
// decides a verdict: it copies tensors between the shared regions and
// emulated device memory, calls kernels and reports return codes, emulated
// times and the profile of the last call.
//
// usage: kevolve-mtia-worker NUM_REGIONS NUM_LIBS ADDRESS_SPACE_BYTES SANDBOX(0|1|2, sandbox.h) PROFILE.yaml
// fds:   as kevolve-worker (worker_protocol.h)
//
// One input set is resident at a time: every call copies its set's inputs
// and (poisoned) outputs into device memory, runs, and copies outputs and
// inputs back, so the shared region always shows what the kernel left in
// device memory. Tensors sit in SRAM when the whole call fits there, else in
// DRAM (mtia_emu_shared.h). Kernel time is the emulator's; since it depends
// only on the commands issued, every call of a TIME batch but the last runs
// in timing-only mode (no arithmetic), and the last runs in full; kernels
// that choose their commands from data they read always run in full.
#include <dlfcn.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "emu/mtia/device.h"
#include "eval/backends/mtia_emu_shared.h"
#include "eval/fd_io.h"
#include "eval/sandbox.h"
#include "eval/thread_parker.h"
#include "eval/worker_protocol.h"
#include "spec/mtia_profile.h"

namespace {

using namespace kevolve::eval;
namespace emu = kevolve::emu::mtia;
using kernel_fn = int (*)(const kv_args*, kv_mtia_device*);

[[noreturn]] void die(int code, const std::string& why) {
  std::fprintf(stderr, "kevolve-mtia-worker: %s\n", why.c_str());
  std::fflush(stderr);
  ::_exit(code);
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

struct region {
  char* base = nullptr;
  size_t size = 0;
};

// A tensor's bytes in the shared region and in device memory.
struct mirror {
  char* host = nullptr;
  uint64_t dev = 0;
  size_t bytes = 0;
};

struct worker_state {
  std::vector<region> regions;
  std::vector<kernel_fn> kernels;
  std::unique_ptr<emu::device> dev;
  uint32_t num_sets = 0;
  std::vector<kv_args> args;                 // [lib * num_sets + set], device addresses
  std::vector<std::vector<mirror>> mirrors;  // same index
  std::vector<std::string> names;
  uint64_t workspace = 0;
  size_t workspace_bytes = 0;
  bool sram = true;
  emu::run_result last;
  std::vector<char> data_dependent;  // per library: its runs need arithmetic
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
  const char* p = payload.data() + sizeof h + size_t(h.num_guards) * 8;  // guard pages mean nothing on a device
  s.num_sets = h.num_sets;
  s.args.resize(size_t(h.num_libs) * h.num_sets);
  std::memcpy(s.args.data(), p, s.args.size() * sizeof(kv_args));
  p += s.args.size() * sizeof(kv_args);
  s.names.clear();
  for (const char* q = p; q < p + h.names_bytes; q += std::strlen(q) + 1) s.names.emplace_back(q);
  s.workspace_bytes = h.workspace_bytes;

  // Placement from the first set (every set has the same shapes).
  double call_bytes = double(h.workspace_bytes);
  const kv_args& a0 = s.args.front();
  if (a0.num_inputs < 0 || a0.num_outputs < 0 || a0.num_inputs > KV_MAX_TENSORS || a0.num_outputs > KV_MAX_TENSORS)
    return false;
  for (int t = 0; t < a0.num_inputs + a0.num_outputs; ++t) {
    const kv_tensor& k = t < a0.num_inputs ? a0.inputs[t] : a0.outputs[t - a0.num_inputs];
    call_bytes += double(kv_numel(&k)) * double(dtype_size(k.dtype));
  }
  s.sram = mtia_emu::in_sram(call_bytes, s.dev->config());
  const emu::level where = s.sram ? emu::level::sram : emu::level::dram;
  s.dev->free_all();
  std::string err;
  std::vector<uint64_t> dev_addr;
  for (int t = 0; t < a0.num_inputs + a0.num_outputs; ++t) {
    const kv_tensor& k = t < a0.num_inputs ? a0.inputs[t] : a0.outputs[t - a0.num_inputs];
    const uint64_t addr = s.dev->alloc(where, std::max<uint64_t>(1, uint64_t(kv_numel(&k)) * dtype_size(k.dtype)), &err);
    if (!addr) die(wire::kExitSetupFailed, "device memory: " + err);
    dev_addr.push_back(addr);
  }
  s.workspace = 0;
  if (s.workspace_bytes) {
    s.workspace = s.dev->alloc(where, s.workspace_bytes, &err);
    if (!s.workspace) die(wire::kExitSetupFailed, "device memory for the workspace: " + err);
  }
  s.mirrors.assign(s.args.size(), {});
  for (size_t i = 0; i < s.args.size(); ++i) {
    kv_args& a = s.args[i];
    if (a.num_inputs != a0.num_inputs || a.num_outputs != a0.num_outputs) return false;
    for (int t = 0; t < a.num_inputs + a.num_outputs; ++t) {
      kv_tensor& k = t < a.num_inputs ? a.inputs[t] : a.outputs[t - a.num_inputs];
      const size_t bytes = size_t(kv_numel(&k)) * dtype_size(k.dtype);
      char* host = resolve(s, reinterpret_cast<uint64_t>(k.data), bytes);
      if (!host) return false;
      s.mirrors[i].push_back({host, dev_addr[size_t(t)], bytes});
      k.data = reinterpret_cast<void*>(static_cast<uintptr_t>(dev_addr[size_t(t)]));
    }
    for (int j = 0; j < a.num_params; ++j) a.params[j].name = size_t(j) < s.names.size() ? s.names[size_t(j)].c_str() : "";
    a.workspace = reinterpret_cast<void*>(static_cast<uintptr_t>(s.workspace));
    a.workspace_bytes = int64_t(s.workspace_bytes);
  }
  return true;
}

void upload(worker_state& s, const std::vector<mirror>& ms) {
  for (const auto& m : ms)
    if (m.bytes) std::memcpy(s.dev->host(m.dev, m.bytes), m.host, m.bytes);
  // No state in scratch from one call to the next.
  if (s.workspace_bytes) std::memset(s.dev->host(s.workspace, s.workspace_bytes), 0xA5, s.workspace_bytes);
}

void download(worker_state& s, const std::vector<mirror>& ms) {
  for (const auto& m : ms)
    if (m.bytes) std::memcpy(m.host, s.dev->host(m.dev, m.bytes), m.bytes);
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

// One call on set `index`; returns the kernel's (or the emulator's) status.
// A kernel whose commands depend on the data it reads (scalar peeks) always
// runs with arithmetic: a timing-only call of it fails in the emulator with
// needs_functional, and is repeated in full.
int run_one(worker_state& s, uint32_t lib, size_t index, bool functional, int64_t* ns) {
  if (s.data_dependent.size() <= lib) s.data_dependent.resize(size_t(lib) + 1, 0);
  functional = functional || s.data_dependent[lib];
  if (functional) upload(s, s.mirrors[index]);
  s.dev->set_functional(functional);
  s.dev->begin_run();
  const int rc = s.kernels[lib](&s.args[index], s.dev->handle());
  s.last = s.dev->end_run();
  s.dev->set_functional(true);
  if (s.last.data_dependent || s.last.needs_functional) s.data_dependent[lib] = 1;
  if (!functional && s.last.needs_functional) return run_one(s, lib, index, true, ns);
  if (functional) download(s, s.mirrors[index]);
  *ns = std::max<int64_t>(1, std::llround(s.last.us * 1e3));
  if (!s.last.ok()) {
    std::fprintf(stderr, "emulator: %s\n", s.last.message.c_str());
    std::fflush(stderr);
    return s.last.status;
  }
  if (rc != 0) return rc;
  if (s.last.launches == 0) {
    std::fprintf(stderr, "emulator: the kernel returned without launching a program\n");
    std::fflush(stderr);
  }
  return 0;
}

void do_run(worker_state& s, const wire::request& q) {
  if (q.lib >= s.kernels.size() || s.num_sets == 0 || q.reps == 0) {
    send_reply(q.nonce, wire::reply_status::bad_request, 0, {});
    return;
  }
  thread_parker::release();
  std::vector<int64_t> ns;
  int first_rc = 0;
  for (uint32_t i = 0; i < q.reps && first_rc == 0; ++i) {
    const size_t index = size_t(q.lib) * s.num_sets + (q.first_set + i) % s.num_sets;
    int64_t t = 0;
    first_rc = run_one(s, q.lib, index, i + 1 == q.reps, &t);
    ns.push_back(t);
  }
  // Nothing the kernel left running may advance while its outputs are read.
  if (!thread_parker::park_after_call("kevolve-mtia-worker", wire::kParkDeadline)) {
    send_reply(q.nonce, wire::reply_status::left_running, 0, ns);
    return;
  }
  send_reply(q.nonce, first_rc ? wire::reply_status::kernel_error : wire::reply_status::ok, first_rc, ns);
}

void do_profile(const worker_state& s, const wire::request& q) {
  using namespace mtia_emu;
  std::vector<int64_t> w(pw_count);
  const emu::run_result& r = s.last;
  w[pw_cycles] = to_word(r.cycles);
  w[pw_us] = to_word(r.us);
  w[pw_bound] = to_word(double(int(r.bound)));
  w[pw_sram] = to_word(s.sram ? 1.0 : 0.0);
  w[pw_commands] = to_word(double(r.commands));
  w[pw_dram_bytes] = to_word(r.dram_read + r.dram_write);
  w[pw_sram_bytes] = to_word(r.sram_read + r.sram_write);
  for (int e = 0; e < emu::n_engines && e < 7; ++e) w[size_t(pw_util + e)] = to_word(r.utilisation[size_t(e)]);
  for (int i = 0; i < emu::n_stalls && i < 6; ++i) w[size_t(pw_stall + i)] = to_word(r.stalls[size_t(i)]);
  w[pw_imbalance] = to_word(r.imbalance);
  w[pw_mem_unused] = to_word(r.mem_unused);
  w[pw_mem_head] = to_word(r.mem_head);
  w[pw_mem_tail] = to_word(r.mem_tail);
  send_reply(q.nonce, wire::reply_status::ok, 0, w);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 6)
    die(wire::kExitSetupFailed, "usage: kevolve-mtia-worker NUM_REGIONS NUM_LIBS ADDRESS_SPACE_BYTES SANDBOX PROFILE.yaml");
  const int num_regions = std::atoi(argv[1]);
  const int num_libs = std::atoi(argv[2]);
  const unsigned long long as_bytes = std::strtoull(argv[3], nullptr, 10);
  const int sandbox_mode = std::atoi(argv[4]);
  if (num_regions < 1 || num_regions > wire::kMaxRegions || num_libs < 1 || num_libs > wire::kMaxLibs)
    die(wire::kExitSetupFailed, "bad region or library count");
  auto params = kevolve::spec::load_mtia_profile(argv[5]);
  if (!params) die(wire::kExitSetupFailed, params.error().message);

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
  // The device (its program stacks included) exists before the sandbox closes.
  s.dev = std::make_unique<emu::device>(*params);

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
      case wire::op::profile: do_profile(s, q); break;
      case wire::op::quit: return 0;
      default: send_reply(q.nonce, wire::reply_status::bad_request, 0, {});
    }
  }
}
