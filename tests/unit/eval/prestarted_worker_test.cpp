// A worker started ahead of its candidate (worker_client::start, then load):
// what sweeps do so that process start-up and a GPU context are off the
// candidate's time. It must be exactly as fresh and as sandboxed as a worker
// spawned for the candidate, and a spare nobody uses must go away at once.
#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include <gtest/gtest.h>

#include "common/paths.h"
#include "eval/backends/cpu_backend.h"
#include "eval/layout.h"
#include "eval/shared_region.h"
#include "eval/worker_client.h"
#include "eval/worker_protocol.h"

namespace kevolve::eval {
namespace {

using std::chrono::milliseconds;

class PrestartedWorker : public ::testing::Test {
 protected:
  void SetUp() override {
    auto r = shared_region::create("prestart-test", 1 << 20);
    ASSERT_TRUE(r.has_value()) << r.error().message;
    region_ = std::make_unique<shared_region>(std::move(*r));
    options_.executable = worker_executable();
    options_.threads = 1;
    options_.address_space_bytes = uint64_t(2) << 30;
  }

  std::filesystem::path compile(const std::string& body) {
    cpu_compiler compiler(cache_root() / "compile" / "prestart-tests", std::chrono::seconds(60));
    const std::string src = "#include <fcntl.h>\n#include <unistd.h>\n#include \"kevolve/abi.h\"\n"
                            "extern \"C\" int kevolve_kernel(const kv_args* a) {\n" + body + "\n}\n";
    auto k = compiler.compile(src, {});
    EXPECT_TRUE(k && k->ok) << (k ? k->report.diagnostics : k.error().message);
    return k ? k->library : std::filesystem::path();
  }

  // One call of the loaded kernel (no tensors).
  static call_outcome call_once(worker_client& w) {
    spec::problem_instance p;
    kv_args args = make_args(p, {}, {}, false, 1);
    auto setup = w.setup(make_setup_payload({{args}}, {}, 0, {}), milliseconds(5000));
    if (!setup.ok()) return setup;
    return w.call(0, 0, milliseconds(5000));
  }

  std::unique_ptr<shared_region> region_;
  worker_options options_;
};

TEST_F(PrestartedWorker, RunsTheLibraryItIsHandedLater) {
  auto w = worker_client::start(options_, {region_.get()}, 1);
  ASSERT_TRUE(w.has_value()) << w.error().message;
  // The worker waits, started, while its candidate is still being compiled.
  const auto lib = compile("return 7;");
  std::this_thread::sleep_for(milliseconds(100));
  ASSERT_TRUE((*w)->still_running());
  ASSERT_TRUE((*w)->load({lib}).has_value());
  const call_outcome out = call_once(**w);
  EXPECT_EQ(int(out.what), int(call_outcome::kind::kernel_error)) << out.detail;
  EXPECT_EQ(out.rc, 7);
}

TEST_F(PrestartedWorker, IsSandboxedLikeASpawnedOne) {
  const auto lib = compile("if (fork() == 0) _exit(0); return 0;");
  auto w = worker_client::start(options_, {region_.get()}, 1);
  ASSERT_TRUE(w.has_value()) << w.error().message;
  ASSERT_TRUE((*w)->load({lib}).has_value());
  const call_outcome out = call_once(**w);
  EXPECT_EQ(int(out.what), int(call_outcome::kind::crashed)) << out.detail;
  EXPECT_NE(out.detail.find("forbidden system call"), std::string::npos) << out.detail;
}

TEST_F(PrestartedWorker, TheKernelCannotReachTheLibrarySocket) {
  // Closed before the library is loaded: no channel to the evaluator but
  // the request loop's pipes.
  const auto lib = compile("return fcntl(" + std::to_string(wire::kLibSocketFd) + ", F_GETFD) == -1 ? 0 : 9;");
  auto w = worker_client::spawn(options_, {region_.get()}, {lib});
  ASSERT_TRUE(w.has_value()) << w.error().message;
  const call_outcome out = call_once(**w);
  EXPECT_TRUE(out.ok()) << "the kernel saw fd " << wire::kLibSocketFd << " open (rc " << out.rc << "): " << out.detail;
}

TEST_F(PrestartedWorker, ASpareNobodyUsesEndsAtOnce) {
  auto w = worker_client::start(options_, {region_.get()}, 1);
  ASSERT_TRUE(w.has_value()) << w.error().message;
  std::this_thread::sleep_for(milliseconds(100));
  const int pid = (*w)->pid();
  const auto t0 = std::chrono::steady_clock::now();
  (*w)->shutdown();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  // It exits when its library socket closes, without being killed after a wait.
  EXPECT_LT(seconds, 0.25);
  EXPECT_NE(::kill(pid, 0), 0) << "process " << pid << " still exists";
}

TEST_F(PrestartedWorker, LoadTakesExactlyTheLibrariesItWasStartedFor) {
  const auto lib = compile("return 0;");
  auto w = worker_client::start(options_, {region_.get()}, 1);
  ASSERT_TRUE(w.has_value()) << w.error().message;
  EXPECT_FALSE((*w)->load({lib, lib}).has_value());
  ASSERT_TRUE((*w)->load({lib}).has_value());
  EXPECT_FALSE((*w)->load({lib}).has_value()) << "a second load must be refused";
  EXPECT_TRUE(call_once(**w).ok());
}

}  // namespace
}  // namespace kevolve::eval
