// kevolve-worker: loads kernel libraries inside a sandbox and runs them on
// tensors in shared memory, on the evaluator's request. It never decides a
// verdict: it only calls kernels and reports return codes and timings.
//
// usage and start-up: worker_skeleton.h. Kernels read and write the shared
// regions directly; each call is timed with the monotonic clock around it,
// with the workspace cleared outside the timed region.
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <cstring>
#include <vector>

#include "eval/worker_skeleton.h"

namespace {

using namespace kevolve::eval;
using kernel_fn = int (*)(const kv_args*);

int64_t now_ns() {
  timespec ts;
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t(ts.tv_sec) * 1000000000LL + ts.tv_nsec;
}

class cpu_worker : public worker_backend {
 public:
  bool setup(worker_core& core, const wire::setup_header& h, const std::vector<uint64_t>& guards) override {
    const size_t page = size_t(::sysconf(_SC_PAGESIZE));
    for (char* g : guards_) ::mprotect(g, page, PROT_READ | PROT_WRITE);
    guards_.clear();
    for (const uint64_t enc : guards) {
      char* g = core.resolve(enc, page);
      if (!g || ::mprotect(g, page, PROT_NONE) != 0) return false;
      guards_.push_back(g);
    }
    // Workspace: private memory with a guard page after it.
    if (h.workspace_bytes + page > workspace_mapped_) {
      if (workspace_) ::munmap(workspace_, workspace_mapped_);
      workspace_mapped_ = (h.workspace_bytes + 2 * page - 1) / page * page + page;
      void* m = ::mmap(nullptr, workspace_mapped_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (m == MAP_FAILED) return false;
      workspace_ = static_cast<char*>(m);
    }
    workspace_bytes_ = h.workspace_bytes;
    ::mprotect(workspace_ + workspace_mapped_ - page, page, PROT_NONE);
    for (auto& a : core.args) {
      for (int i = 0; i < a.num_inputs + a.num_outputs; ++i) {
        kv_tensor& t = i < a.num_inputs ? a.inputs[i] : a.outputs[i - a.num_inputs];
        char* ptr = core.resolve(reinterpret_cast<uint64_t>(t.data), 0);
        if (!ptr) return false;
        t.data = ptr;
      }
      a.workspace = workspace_bytes_ ? workspace_ : nullptr;
      a.workspace_bytes = int64_t(workspace_bytes_);
    }
    return true;
  }

  int run(worker_core& core, const wire::request& q, std::vector<int64_t>& ns) override {
    const kernel_fn kernel = core.kernel<kernel_fn>(q.lib);
    for (uint32_t i = 0; i < q.reps; ++i) {
      const kv_args& a = core.args[core.index(q, i)];
      if (workspace_bytes_) std::memset(workspace_, 0xA5, workspace_bytes_);  // no state in scratch
      const int64_t t0 = now_ns();
      const int rc = kernel(&a);
      const int64_t t1 = now_ns();
      ns.push_back(t1 - t0);
      if (rc != 0) return rc;
    }
    return 0;
  }

 private:
  std::vector<char*> guards_;
  char* workspace_ = nullptr;
  size_t workspace_bytes_ = 0;
  size_t workspace_mapped_ = 0;
};

}  // namespace

int main(int argc, char** argv) {
  worker_traits traits;
  traits.name = "kevolve-worker";
  traits.populate_regions = true;
  cpu_worker backend;
  return run_worker(argc, argv, traits, backend);
}
