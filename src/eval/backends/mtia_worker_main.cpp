// kevolve-mtia-worker: the mtia_emu counterpart of kevolve-worker. It owns
// one emulated MTIA-like device (src/emu/mtia), loads candidate libraries
// and runs them inside the emulator on the evaluator's request. It never
// decides a verdict: it copies tensors between the shared regions and
// emulated device memory, calls kernels and reports return codes, emulated
// times and the profile of the last call.
//
// usage: kevolve-mtia-worker NUM_REGIONS NUM_LIBS ADDRESS_SPACE_BYTES SANDBOX(0|1|2, sandbox.h) PROFILE.yaml
// start-up and request loop: worker_skeleton.h
//
// One input set is resident at a time: every call copies its set's inputs
// and (poisoned) outputs into device memory, runs, and copies outputs and
// inputs back, so the shared region always shows what the kernel left in
// device memory. Tensors sit in SRAM when the whole call fits there, else in
// DRAM (mtia_emu_shared.h). Kernel time is the emulator's; since it depends
// only on the commands issued, every call of a TIME batch but the last runs
// in timing-only mode (no arithmetic), and the last runs in full; kernels
// that choose their commands from data they read always run in full.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "emu/mtia/device.h"
#include "eval/backends/mtia_emu_shared.h"
#include "eval/worker_skeleton.h"
#include "spec/mtia_profile.h"

namespace {

using namespace kevolve::eval;
namespace emu = kevolve::emu::mtia;
using kernel_fn = int (*)(const kv_args*, kv_mtia_device*);
constexpr const char* kName = "kevolve-mtia-worker";

// A tensor's bytes in the shared region and in device memory.
struct mirror {
  char* host = nullptr;
  uint64_t dev = 0;
  size_t bytes = 0;
};

class mtia_worker : public worker_backend {
 public:
  // The device (its program stacks included) exists before the sandbox closes.
  void open(char** extra) override {
    auto params = kevolve::spec::load_mtia_profile(extra[0]);
    if (!params) worker_die(kName, wire::kExitSetupFailed, params.error().message);
    dev_ = std::make_unique<emu::device>(*params);
  }

  bool setup(worker_core& core, const wire::setup_header& h, const std::vector<uint64_t>&) override {
    // Guard pages mean nothing on a device.
    workspace_bytes_ = h.workspace_bytes;
    // Placement from the first set (every set has the same shapes).
    double call_bytes = double(h.workspace_bytes);
    const kv_args& a0 = core.args.front();
    if (a0.num_inputs < 0 || a0.num_outputs < 0 || a0.num_inputs > KV_MAX_TENSORS || a0.num_outputs > KV_MAX_TENSORS)
      return false;
    for (int t = 0; t < a0.num_inputs + a0.num_outputs; ++t) {
      const kv_tensor& k = t < a0.num_inputs ? a0.inputs[t] : a0.outputs[t - a0.num_inputs];
      call_bytes += double(kv_numel(&k)) * double(dtype_bytes(k.dtype));
    }
    sram_ = mtia_emu::in_sram(call_bytes, dev_->config());
    const emu::level where = sram_ ? emu::level::sram : emu::level::dram;
    dev_->free_all();
    std::string err;
    std::vector<uint64_t> dev_addr;
    for (int t = 0; t < a0.num_inputs + a0.num_outputs; ++t) {
      const kv_tensor& k = t < a0.num_inputs ? a0.inputs[t] : a0.outputs[t - a0.num_inputs];
      const uint64_t addr = dev_->alloc(where, std::max<uint64_t>(1, uint64_t(kv_numel(&k)) * dtype_bytes(k.dtype)), &err);
      if (!addr) worker_die(kName, wire::kExitSetupFailed, "device memory: " + err);
      dev_addr.push_back(addr);
    }
    workspace_ = 0;
    if (workspace_bytes_) {
      workspace_ = dev_->alloc(where, workspace_bytes_, &err);
      if (!workspace_) worker_die(kName, wire::kExitSetupFailed, "device memory for the workspace: " + err);
    }
    mirrors_.assign(core.args.size(), {});
    for (size_t i = 0; i < core.args.size(); ++i) {
      kv_args& a = core.args[i];
      if (a.num_inputs != a0.num_inputs || a.num_outputs != a0.num_outputs) return false;
      for (int t = 0; t < a.num_inputs + a.num_outputs; ++t) {
        kv_tensor& k = t < a.num_inputs ? a.inputs[t] : a.outputs[t - a.num_inputs];
        const size_t bytes = size_t(kv_numel(&k)) * dtype_bytes(k.dtype);
        char* host = core.resolve(reinterpret_cast<uint64_t>(k.data), bytes);
        if (!host) return false;
        mirrors_[i].push_back({host, dev_addr[size_t(t)], bytes});
        k.data = reinterpret_cast<void*>(static_cast<uintptr_t>(dev_addr[size_t(t)]));
      }
      a.workspace = reinterpret_cast<void*>(static_cast<uintptr_t>(workspace_));
      a.workspace_bytes = int64_t(workspace_bytes_);
    }
    return true;
  }

  int run(worker_core& core, const wire::request& q, std::vector<int64_t>& ns) override {
    int first_rc = 0;
    for (uint32_t i = 0; i < q.reps && first_rc == 0; ++i) {
      int64_t t = 0;
      first_rc = run_one(core, q.lib, core.index(q, i), i + 1 == q.reps, &t);
      ns.push_back(t);
    }
    return first_rc;
  }

  // PROFILE: the last call's run profile.
  bool serve(worker_core&, const wire::request& q, std::vector<int64_t>& w) override {
    if (q.code != wire::op::profile) return false;
    using namespace mtia_emu;
    w.assign(pw_count, 0);
    const emu::run_result& r = last_;
    w[pw_cycles] = to_word(r.cycles);
    w[pw_us] = to_word(r.us);
    w[pw_bound] = to_word(double(int(r.bound)));
    w[pw_sram] = to_word(sram_ ? 1.0 : 0.0);
    w[pw_commands] = to_word(double(r.commands));
    w[pw_dram_bytes] = to_word(r.dram_read + r.dram_write);
    w[pw_sram_bytes] = to_word(r.sram_read + r.sram_write);
    for (int e = 0; e < emu::n_engines && e < 7; ++e) w[size_t(pw_util + e)] = to_word(r.utilisation[size_t(e)]);
    for (int i = 0; i < emu::n_stalls && i < 6; ++i) w[size_t(pw_stall + i)] = to_word(r.stalls[size_t(i)]);
    w[pw_imbalance] = to_word(r.imbalance);
    w[pw_mem_unused] = to_word(r.mem_unused);
    w[pw_mem_head] = to_word(r.mem_head);
    w[pw_mem_tail] = to_word(r.mem_tail);
    return true;
  }

 private:
  void upload(const std::vector<mirror>& ms) {
    for (const auto& m : ms)
      if (m.bytes) std::memcpy(dev_->host(m.dev, m.bytes), m.host, m.bytes);
    // No state in scratch from one call to the next.
    if (workspace_bytes_) std::memset(dev_->host(workspace_, workspace_bytes_), 0xA5, workspace_bytes_);
  }

  void download(const std::vector<mirror>& ms) {
    for (const auto& m : ms)
      if (m.bytes) std::memcpy(m.host, dev_->host(m.dev, m.bytes), m.bytes);
  }

  // One call on args `index`; returns the kernel's (or the emulator's) status.
  // A kernel whose commands depend on the data it reads (scalar peeks) always
  // runs with arithmetic: a timing-only call of it fails in the emulator with
  // needs_functional, and is repeated in full.
  int run_one(worker_core& core, uint32_t lib, size_t index, bool functional, int64_t* ns) {
    if (data_dependent_.size() <= lib) data_dependent_.resize(size_t(lib) + 1, 0);
    functional = functional || data_dependent_[lib];
    if (functional) upload(mirrors_[index]);
    dev_->set_functional(functional);
    dev_->begin_run();
    const int rc = core.kernel<kernel_fn>(lib)(&core.args[index], dev_->handle());
    last_ = dev_->end_run();
    dev_->set_functional(true);
    if (last_.data_dependent || last_.needs_functional) data_dependent_[lib] = 1;
    if (!functional && last_.needs_functional) return run_one(core, lib, index, true, ns);
    if (functional) download(mirrors_[index]);
    *ns = std::max<int64_t>(1, std::llround(last_.us * 1e3));
    if (!last_.ok()) {
      std::fprintf(stderr, "emulator: %s\n", last_.message.c_str());
      std::fflush(stderr);
      return last_.status;
    }
    if (rc != 0) return rc;
    if (last_.launches == 0) {
      std::fprintf(stderr, "emulator: the kernel returned without launching a program\n");
      std::fflush(stderr);
    }
    return 0;
  }

  std::unique_ptr<emu::device> dev_;
  std::vector<std::vector<mirror>> mirrors_;  // per args index
  uint64_t workspace_ = 0;
  size_t workspace_bytes_ = 0;
  bool sram_ = true;
  emu::run_result last_;
  std::vector<char> data_dependent_;  // per library: its runs need arithmetic
};

}  // namespace

int main(int argc, char** argv) {
  worker_traits traits;
  traits.name = kName;
  traits.extra_usage = " PROFILE.yaml";
  traits.extra_args = 1;
  mtia_worker backend;
  return run_worker(argc, argv, traits, backend);
}
