// The worker's sandbox on its own, below the evaluator's static checks: a
// library that tries what the source scan would normally refuse is still
// stopped by the kernel (seccomp), and sees no secrets.
#include <linux/landlock.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>

#include <gtest/gtest.h>

#include "common/paths.h"
#include "eval/backends/cpu_backend.h"
#include "eval/layout.h"
#include "eval/shared_region.h"
#include "eval/thread_parker.h"
#include "eval/worker_client.h"

namespace kevolve::eval {
namespace {

class SandboxTest : public ::testing::Test {
 protected:
  // Compiles `body` as a kernel, runs it once in a sandboxed worker.
  // With a launcher (a profiler), the worker is its child; `exit_status`
  // then receives what wait_exit saw.
  call_outcome run_kernel(const std::string& body, std::vector<std::string> launcher = {}, int* exit_status = nullptr) {
    cpu_compiler compiler(cache_root() / "compile" / "sandbox-tests", std::chrono::seconds(60));
    const std::string src = "#include <cstdio>\n#include <cstdlib>\n#include <csignal>\n#include <fcntl.h>\n"
                            "#include <pthread.h>\n#include <unistd.h>\n#include <sys/stat.h>\n#include <sys/socket.h>\n#include <sys/syscall.h>\n#include \"kevolve/abi.h\"\n"
                            "extern \"C\" int kevolve_kernel(const kv_args* a) {\n" + body + "\n}\n";
    auto k = compiler.compile(src, {});
    EXPECT_TRUE(k && k->ok) << (k ? k->report.diagnostics : k.error().message);
    auto region = shared_region::create("sandbox-test", 1 << 20);
    EXPECT_TRUE(region.has_value());
    worker_options o;
    o.executable = worker_executable();
    o.threads = 1;
    o.address_space_bytes = uint64_t(2) << 30;
    o.launcher = std::move(launcher);
    o.keep_user = profiled_;
    auto w = worker_client::spawn(o, {&*region}, {k->library});
    EXPECT_TRUE(w.has_value()) << (w ? "" : w.error().message);
    spec::problem_instance p;  // a kernel with no tensors
    kv_args args = make_args(p, {}, {}, false, 1);
    auto setup = (*w)->setup(make_setup_payload({{args}}, {}, 0, {}), std::chrono::milliseconds(5000));
    setup_detail_ = setup.detail;
    if (!setup.ok()) return setup;
    EXPECT_TRUE(setup.ok()) << setup.detail;
    call_outcome out = (*w)->call(0, 0, std::chrono::milliseconds(5000));
    if (exit_status) {
      auto st = (*w)->wait_exit(std::chrono::milliseconds(5000));
      EXPECT_TRUE(st.has_value()) << (st ? "" : st.error().message);
      *exit_status = st ? *st : -1;
    }
    (*w)->shutdown();
    return out;
  }

  bool profiled_ = false;  // SANDBOX 2: the sandbox of a worker a profiler runs
  std::string setup_detail_;

  static bool kernel_has_landlock() {
    return ::syscall(SYS_landlock_create_ruleset, nullptr, 0, LANDLOCK_CREATE_RULESET_VERSION) >= 1;
  }

  static void expect_killed_by_sandbox(const call_outcome& out) {
    EXPECT_EQ(int(out.what), int(call_outcome::kind::crashed)) << out.detail;
    EXPECT_NE(out.detail.find("forbidden system call"), std::string::npos) << out.detail;
  }
};

TEST_F(SandboxTest, ForkKillsTheWorker) { expect_killed_by_sandbox(run_kernel("if (fork() == 0) _exit(0); return 0;")); }

TEST_F(SandboxTest, ExecKillsTheWorker) {
  expect_killed_by_sandbox(run_kernel("char* argv[] = {(char*)\"/bin/true\", nullptr}; execv(\"/bin/true\", argv); return 0;"));
}

TEST_F(SandboxTest, NetworkKillsTheWorker) { expect_killed_by_sandbox(run_kernel("return socket(AF_INET, SOCK_STREAM, 0) >= 0 ? 0 : 1;")); }

// The worker parks its other threads before replying (thread_parker.h): a
// kernel may not replace the handler of the signal that does it...
TEST_F(SandboxTest, ReplacingTheParkingSignalsHandlerKillsTheWorker) {
  const std::string sig = std::to_string(thread_parker::signal_number());
  expect_killed_by_sandbox(run_kernel("struct sigaction ignore = {}; ignore.sa_handler = SIG_IGN;\n"
                                      "return sigaction(" + sig + ", &ignore, nullptr);"));
  // Reading it is harmless.
  EXPECT_TRUE(run_kernel("struct sigaction old = {}; return sigaction(" + sig + ", nullptr, &old);").ok());
}

// ...and a thread that blocks it, and so would keep computing after the call
// returned, turns the reply into "left running", while a thread that waits
// for work does not.
TEST_F(SandboxTest, AThreadThatWillNotStopAfterTheCallIsReported) {
  // The thread spins far past the 2 s deadline (2^33 steps took about 2 s
  // here and sometimes finished first); the worker is killed after the call.
  const call_outcome out = run_kernel(
      "sigset_t all; sigfillset(&all); pthread_sigmask(SIG_SETMASK, &all, nullptr);\n"
      "pthread_t t; pthread_create(&t, nullptr, [](void*) -> void* { for (volatile long i = 0; i < 1L << 40; i = i + 1) {} return nullptr; }, nullptr);\n"
      "return 0;");
  EXPECT_EQ(int(out.what), int(call_outcome::kind::left_running)) << out.detail;
  EXPECT_NE(out.detail.find("did not stop within"), std::string::npos) << out.detail;
  EXPECT_TRUE(run_kernel("pthread_t t; pthread_create(&t, nullptr, [](void*) -> void* { pause(); return nullptr; }, nullptr);\n"
                         "return 0;").ok());
}

// A profiler (ncu) starts the worker as its child: the worker gets its fds
// through it and keeps every guard; the evaluator waits for the launcher.
TEST_F(SandboxTest, AWorkerStartedThroughALauncherServesAndStaysSandboxed) {
  // sh runs the worker as its child, as ncu does, and exits with its status.
  const std::vector<std::string> parent = {"/bin/sh", "-c", "\"$@\"", "sh"};
  int status = -1;
  EXPECT_TRUE(run_kernel("return 7 - 7;", parent, &status).ok());
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "exit status " << status;
  EXPECT_EQ(int(run_kernel("return socket(AF_INET, SOCK_STREAM, 0) >= 0 ? 0 : 1;", parent).what),
            int(call_outcome::kind::crashed));
  // exec'd in place (env): the death is the worker's own, with its reason.
  expect_killed_by_sandbox(run_kernel("return socket(AF_INET, SOCK_STREAM, 0) >= 0 ? 0 : 1;", {"/usr/bin/env"}));
}

// Calls only a privileged process could make, for a worker that keeps its user.
TEST_F(SandboxTest, PrivilegedCallsKillTheWorker) {
  expect_killed_by_sandbox(run_kernel("return syscall(SYS_settimeofday, 0, 0) == 0 ? 0 : 1;"));
  expect_killed_by_sandbox(run_kernel("return syscall(SYS_open_by_handle_at, -1, 0, 0) == 0 ? 0 : 1;"));
}

// A worker run by ncu keeps its user and may write, because ncu's library in
// it takes a lock file under $TMPDIR; Landlock keeps every write inside the
// worker's private directory (and the NVIDIA device files). Where the kernel
// has no Landlock the worker refuses to start rather than write unconfined.
TEST_F(SandboxTest, AProfiledWorkerWritesBeneathItsTmpdirOnly) {
  profiled_ = true;
  // Files of the evaluator's user outside the worker's directory: one to
  // create, one that exists (appended, renamed away, made world-writable).
  const std::string fresh = "/tmp/kevolve-sandbox-profiled-new", victim = "/tmp/kevolve-sandbox-profiled-victim";
  ::unlink(fresh.c_str());
  { std::ofstream(victim) << "evaluator data\n"; }
  ::chmod(victim.c_str(), 0644);
  const call_outcome out = run_kernel(
      "char dir[512], lock[600]; snprintf(dir, sizeof dir, \"%s/nvidia\", getenv(\"TMPDIR\"));\n"
      "snprintf(lock, sizeof lock, \"%s/lock\", dir);\n"
      "int made = mkdir(dir, 0755); int mine = open(lock, O_RDWR | O_CREAT, 0644);\n"
      "int other = open(\"" + fresh + "\", O_WRONLY | O_CREAT, 0644);\n"
      "int append = open(\"" + victim + "\", O_WRONLY | O_APPEND);\n"
      "int moved = rename(\"" + victim + "\", lock);\n"
      "int mode = chmod(\"" + victim + "\", 0666);\n"
      "int cut = truncate(\"" + victim + "\", 0);\n"
      "return made != 0 ? 11 : mine < 0 ? 12 : other >= 0 ? 13 : append >= 0 ? 14 : moved == 0 ? 15 : mode == 0 ? 16 :\n"
      "       cut == 0 ? 17 : 0;");
  struct stat st;
  const bool victim_intact = ::stat(victim.c_str(), &st) == 0 && (st.st_mode & 0777) == 0644 && st.st_size == 15;
  ::unlink(victim.c_str());
  if (!kernel_has_landlock()) {
    EXPECT_NE(setup_detail_.find("no Landlock"), std::string::npos) << setup_detail_;
    return;
  }
  EXPECT_TRUE(out.ok()) << out.detail << " rc=" << out.rc << " (11 mkdir in TMPDIR failed, 12 lock file refused, "
                        << "13 a new file outside written, 14 an existing file appended, 15 renamed away, "
                        << "16 chmod allowed, 17 truncated by path)";
  EXPECT_NE(::access(fresh.c_str(), F_OK), 0);
  EXPECT_TRUE(victim_intact);
}

TEST_F(SandboxTest, AProfiledWorkerIsStillKilledForNetworkExecAndPrivilegedCalls) {
  profiled_ = true;
  if (!kernel_has_landlock()) GTEST_SKIP() << "this kernel has no Landlock: profiled workers do not start (test above)";
  expect_killed_by_sandbox(run_kernel("return socket(AF_INET, SOCK_STREAM, 0) >= 0 ? 0 : 1;"));
  expect_killed_by_sandbox(run_kernel("char* argv[] = {(char*)\"/bin/true\", nullptr}; execv(\"/bin/true\", argv); return 0;"));
  expect_killed_by_sandbox(run_kernel("return syscall(SYS_settimeofday, 0, 0) == 0 ? 0 : 1;"));
}

TEST_F(SandboxTest, SignalHandlersKillTheWorker) {
  expect_killed_by_sandbox(run_kernel("signal(SIGSEGV, SIG_IGN); return 0;"));
}

TEST_F(SandboxTest, SignallingTheEvaluatorKillsTheWorker) {
  expect_killed_by_sandbox(run_kernel("kill(getppid(), SIGTERM); return 0;"));
}

TEST_F(SandboxTest, FilesCannotBeWritten) {
  ::unlink("/tmp/kevolve-sandbox-probe");
  const call_outcome out = run_kernel("return open(\"/tmp/kevolve-sandbox-probe\", O_WRONLY | O_CREAT, 0644) >= 0 ? 9 : 0;");
  EXPECT_TRUE(out.ok()) << out.detail << " rc=" << out.rc;
  EXPECT_NE(::access("/tmp/kevolve-sandbox-probe", F_OK), 0);
}

// A world-writable file, so that only the filter (not file permissions or the
// switch to nobody) stands between the kernel and it.
TEST_F(SandboxTest, ExistingFilesCannotBeTruncatedOrAppended) {
  const std::string victim = "/tmp/kevolve-sandbox-writable-victim";
  { std::ofstream(victim) << "evaluator data\n"; }
  ::chmod(victim.c_str(), 0666);
  const call_outcome out = run_kernel(
      "int fa = open(\"" + victim + "\", O_WRONLY | O_TRUNC); int fb = open(\"" + victim + "\", O_WRONLY | O_APPEND);\n"
      "int fc = openat(AT_FDCWD, \"" + victim + "\", O_RDWR); return (fa >= 0 || fb >= 0 || fc >= 0) ? 9 : 0;");
  struct stat st;
  const bool intact = ::stat(victim.c_str(), &st) == 0 && st.st_size == 15;
  ::unlink(victim.c_str());
  EXPECT_TRUE(out.ok()) << out.detail << " rc=" << out.rc;
  EXPECT_TRUE(intact);
}

TEST_F(SandboxTest, SecretsDoNotReachTheKernel) {
  ::setenv("OPENAI_API_KEY", "sk-test-must-not-leak", 1);
  const call_outcome out = run_kernel("return std::getenv(\"OPENAI_API_KEY\") ? 9 : 0;");
  ::unsetenv("OPENAI_API_KEY");
  EXPECT_TRUE(out.ok()) << "the kernel saw the variable (rc " << out.rc << ")";
}

TEST_F(SandboxTest, RootIsDroppedToNobody) {
  if (::geteuid() != 0) GTEST_SKIP() << "privileges are dropped only when the evaluator runs as root";
  const call_outcome out = run_kernel("return getuid() == 0 || geteuid() == 0 ? 9 : 0;");
  EXPECT_TRUE(out.ok()) << "the kernel ran as root";
}

TEST_F(SandboxTest, ThreadsStillWork) {
  const call_outcome out = run_kernel("int s = 0;\n#pragma omp parallel num_threads(2) reduction(+:s)\n s += 1;\nreturn s == 2 ? 0 : 9;");
  EXPECT_TRUE(out.ok()) << out.detail << " rc=" << out.rc;
}

}  // namespace
}  // namespace kevolve::eval
