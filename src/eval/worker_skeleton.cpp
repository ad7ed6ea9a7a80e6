#include "eval/worker_skeleton.h"

#include <dlfcn.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "eval/fd_io.h"
#include "eval/sandbox.h"
#include "eval/thread_parker.h"

namespace kevolve::eval {

void worker_die(const char* program, int code, const std::string& why) {
  std::fprintf(stderr, "%s: %s\n", program, why.c_str());
  std::fflush(stderr);
  ::_exit(code);
}

size_t dtype_bytes(int32_t dtype) {
  switch (dtype) {
    case KV_F16:
    case KV_BF16: return 2;
    case KV_I64:
    case KV_F64: return 8;
    case KV_U8: return 1;
    default: return 4;
  }
}

char* worker_core::resolve(uint64_t encoded, size_t bytes) const {
  const uint32_t r = wire::region_of(encoded);
  const uint64_t off = wire::offset_of(encoded);
  if (r >= regions.size() || off > regions[r].size || bytes > regions[r].size - off) return nullptr;
  return regions[r].base + off;
}

namespace {

void send_reply(uint64_t nonce, wire::reply_status st, int rc, const std::vector<int64_t>& words) {
  wire::reply r;
  r.nonce = nonce;
  r.status = st;
  r.rc = rc;
  r.count = uint32_t(words.size());
  if (!write_all(wire::kReplyFd, &r, sizeof r) ||
      (!words.empty() && !write_all(wire::kReplyFd, words.data(), words.size() * sizeof(int64_t))))
    ::_exit(0);  // evaluator went away
}

class skeleton {
 public:
  skeleton(const worker_traits& traits, worker_backend& backend) : traits_(traits), backend_(backend) {}

  int main(int argc, char** argv) {
    if (argc != 5 + traits_.extra_args)
      fail(wire::kExitSetupFailed, std::string("usage: ") + traits_.name +
                                       " NUM_REGIONS NUM_LIBS ADDRESS_SPACE_BYTES SANDBOX" + traits_.extra_usage);
    const int num_regions = std::atoi(argv[1]);
    const int num_libs = std::atoi(argv[2]);
    const unsigned long long as_bytes = std::strtoull(argv[3], nullptr, 10);
    const int sandbox_mode = std::atoi(argv[4]);
    if (num_regions < 1 || num_regions > wire::kMaxRegions || num_libs < 1 || num_libs > wire::kMaxLibs)
      fail(wire::kExitSetupFailed, "bad region or library count");
    map_regions(num_regions);
    backend_.open(argv + 5);
    backend_.before_libraries(core_);
    // Every thread running now is the worker's own (thread_parker.h).
    const std::string parker = thread_parker::install();
    if (!parker.empty()) fail(wire::kExitSetupFailed, parker);
    // A worker started ahead of its candidate waits here, its context ready.
    receive_libraries(num_libs);
    if (traits_.load_before_sandbox) load_kernels();
    sandbox_options opts = sandbox_for_mode(sandbox_mode);
    opts.address_space_bytes = traits_.limit_address_space ? as_bytes : 0;
    opts.reserved_signal = thread_parker::signal_number();
    const std::string err = enter_sandbox(opts);
    if (!err.empty()) fail(wire::kExitSandboxFailed, err);
    if (!traits_.load_before_sandbox) load_kernels();
    seal_process();
    return serve();
  }

 private:
  [[noreturn]] void fail(int code, const std::string& why) { worker_die(traits_.name, code, why); }

  void map_regions(int n) {
    for (int i = 0; i < n; ++i) {
      struct stat st;
      const int fd = wire::kFirstRegionFd + i;
      if (::fstat(fd, &st) != 0) fail(wire::kExitSetupFailed, "region fd " + std::to_string(fd) + " is not open");
      // populate_regions: the page tables are filled now rather than page by
      // page in the first timed calls.
      const int flags = MAP_SHARED | (traits_.populate_regions ? MAP_POPULATE : 0);
      void* m = ::mmap(nullptr, size_t(st.st_size), PROT_READ | PROT_WRITE, flags, fd, 0);
      if (m == MAP_FAILED) fail(wire::kExitSetupFailed, std::string("mmap region: ") + std::strerror(errno));
      ::close(fd);
      core_.regions.push_back({static_cast<char*>(m), size_t(st.st_size)});
    }
  }

  // One lib_message with exactly n fds; the socket closes after it. The
  // evaluator closing its end first (a started worker it no longer wants)
  // ends the process.
  void receive_libraries(int n) {
    wire::lib_message m;
    bool truncated = false;
    const ssize_t r = recv_with_fds(wire::kLibSocketFd, &m, sizeof m, lib_fds_, truncated);
    if (r == 0) ::_exit(0);
    const wire::lib_message expect;
    if (r != ssize_t(sizeof m) || m.magic != expect.magic || m.count != uint32_t(n) || truncated)
      fail(wire::kExitSetupFailed, "bad library message on fd " + std::to_string(wire::kLibSocketFd));
    if (lib_fds_.size() != size_t(n))
      fail(wire::kExitSetupFailed, "expected " + std::to_string(n) + " library fds, got " + std::to_string(lib_fds_.size()));
    ::close(wire::kLibSocketFd);
  }

  void load_kernels() {
    for (size_t i = 0; i < lib_fds_.size(); ++i) {
      const std::string path = "/proc/self/fd/" + std::to_string(lib_fds_[i]);
      void* h = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (!h) fail(wire::kExitSetupFailed, std::string("dlopen: ") + ::dlerror());
      void* fn = ::dlsym(h, "kevolve_kernel");
      if (!fn) fail(wire::kExitSetupFailed, "library " + std::to_string(i) + " has no kevolve_kernel");
      core_.kernels.push_back(fn);
      ::close(lib_fds_[i]);
    }
    lib_fds_.clear();
    backend_.loaded(core_);
  }

  // The parts of a SETUP every backend reads alike: sets, args, names.
  bool read_setup(const std::vector<char>& payload, wire::setup_header& h, std::vector<uint64_t>& guards) {
    if (payload.size() < sizeof h) return false;
    std::memcpy(&h, payload.data(), sizeof h);
    const size_t need = sizeof h + size_t(h.num_guards) * 8 + size_t(h.num_libs) * h.num_sets * sizeof(kv_args) + h.names_bytes;
    if (payload.size() != need || h.num_libs != core_.kernels.size() || h.num_sets == 0) return false;
    const char* p = payload.data() + sizeof h;
    guards.resize(h.num_guards);
    if (h.num_guards) std::memcpy(guards.data(), p, size_t(h.num_guards) * 8);
    p += size_t(h.num_guards) * 8;
    core_.num_sets = h.num_sets;
    core_.args.resize(size_t(h.num_libs) * h.num_sets);
    std::memcpy(core_.args.data(), p, core_.args.size() * sizeof(kv_args));
    p += core_.args.size() * sizeof(kv_args);
    core_.names.clear();
    for (const char* q = p; q < p + h.names_bytes; q += std::strlen(q) + 1) core_.names.emplace_back(q);
    for (auto& a : core_.args)
      for (int j = 0; j < std::min(a.num_params, KV_MAX_PARAMS); ++j)
        a.params[j].name = size_t(j) < core_.names.size() ? core_.names[size_t(j)].c_str() : "";
    return true;
  }

  void run(const wire::request& q) {
    if (q.lib >= core_.kernels.size() || core_.num_sets == 0 || q.reps == 0) {
      send_reply(q.nonce, wire::reply_status::bad_request, 0, {});
      return;
    }
    thread_parker::release();
    std::vector<int64_t> ns;
    ns.reserve(q.reps);
    const int rc = backend_.run(core_, q, ns);
    // Nothing the kernel left running may advance while its outputs are read.
    if (!thread_parker::park_after_call(traits_.name, wire::kParkDeadline)) {
      send_reply(q.nonce, wire::reply_status::left_running, 0, ns);
      return;
    }
    backend_.after_run(core_, q);
    send_reply(q.nonce, rc ? wire::reply_status::kernel_error : wire::reply_status::ok, rc, ns);
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
          wire::setup_header h;
          std::vector<uint64_t> guards;
          const bool ok = read_setup(payload, h, guards) && backend_.setup(core_, h, guards);
          send_reply(q.nonce, ok ? wire::reply_status::ok : wire::reply_status::bad_request, 0, {});
          break;
        }
        case wire::op::call:
        case wire::op::time: run(q); break;
        case wire::op::quit: return 0;
        default: {
          std::vector<int64_t> words;
          const bool ok = backend_.serve(core_, q, words);
          send_reply(q.nonce, ok ? wire::reply_status::ok : wire::reply_status::bad_request, 0, words);
        }
      }
    }
  }

  const worker_traits& traits_;
  worker_backend& backend_;
  worker_core core_;
  std::vector<int> lib_fds_;
};

}  // namespace

int run_worker(int argc, char** argv, const worker_traits& traits, worker_backend& backend) {
  return skeleton(traits, backend).main(argc, argv);
}

}  // namespace kevolve::eval
