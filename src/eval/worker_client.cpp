#include "eval/worker_client.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "common/subprocess.h"
#include "eval/fd_io.h"
#include "eval/shared_region.h"

namespace kevolve::eval {
namespace {

using clock_type = std::chrono::steady_clock;

// Variables a kernel's process may see: threading knobs only. Everything else
// (API keys, tokens, paths) is dropped.
std::vector<std::string> worker_environment(const std::filesystem::path& dir, int threads) {
  const std::string n = std::to_string(threads);
  std::vector<std::string> env = {
      "PATH=/usr/bin:/bin", "LANG=C", "HOME=" + dir.string(), "TMPDIR=" + dir.string(),
      "OMP_NUM_THREADS=" + n, "OMP_WAIT_POLICY=PASSIVE", "OPENBLAS_NUM_THREADS=" + n,
      "OPENBLAS_THREAD_TIMEOUT=4", "MALLOC_ARENA_MAX=2", "DNNL_VERBOSE=0"};
  // The machine's OpenBLAS settings are part of how the baseline runs.
  // So are the GPU the node gives this process and where its libraries are.
  for (const char* pass : {"OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE", "CUDA_VISIBLE_DEVICES", "LD_LIBRARY_PATH"})
    if (const char* v = std::getenv(pass)) env.push_back(std::string(pass) + "=" + v);
  // GPU workers load every kernel when the library is loaded, before the
  // sandbox closes (no lazy loading later).
  env.push_back("CUDA_MODULE_LOADING=EAGER");
  return env;
}


// Reads exactly n bytes before the deadline. 1 ok, 0 EOF/error, -1 timeout.
int read_until(int fd, void* buf, size_t n, clock_type::time_point deadline) {
  auto* p = static_cast<char*>(buf);
  while (n) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock_type::now()).count();
    if (left <= 0) return -1;
    pollfd pfd{fd, POLLIN, 0};
    const int pr = ::poll(&pfd, 1, static_cast<int>(left));
    if (pr < 0 && errno == EINTR) continue;
    if (pr == 0) return -1;
    const ssize_t r = ::read(fd, p, n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return 0;
    p += r;
    n -= static_cast<size_t>(r);
  }
  return 1;
}

}  // namespace

std::string describe_worker_death(int status) {
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    std::string s = "killed by signal " + std::to_string(sig) + " (" + strsignal(sig) + ")";
    if (sig == SIGSYS) s += ": the sandbox stopped a forbidden system call (new process, exec, network, ptrace, signal handler or signals to other processes)";
    if (sig == SIGXFSZ) s += ": the kernel printed more output than allowed";
    return s;
  }
  if (WIFEXITED(status)) {
    const int code = WEXITSTATUS(status);
    if (code == wire::kExitSetupFailed) return "the worker could not load the kernel (exit " + std::to_string(code) + ")";
    if (code == wire::kExitSandboxFailed) return "the worker could not enter its sandbox (exit " + std::to_string(code) + ")";
    if (code == wire::kExitDeviceError)
      return "the GPU worker stopped after a CUDA error (exit " + std::to_string(code) + "); it is replaced";
    return "the process exited with status " + std::to_string(code) + " in the middle of a call";
  }
  return "the process ended (wait status " + std::to_string(status) + ")";
}

expected<std::unique_ptr<worker_client>> worker_client::spawn(const worker_options& o,
                                                              const std::vector<const shared_region*>& regions,
                                                              const std::vector<std::filesystem::path>& libraries) {
  auto w = start(o, regions, libraries.size());
  if (!w) return w;
  if (auto r = (*w)->load(libraries); !r) return tl::unexpected(r.error());
  return w;
}

expected<std::unique_ptr<worker_client>> worker_client::start(const worker_options& o,
                                                              const std::vector<const shared_region*>& regions,
                                                              size_t num_libraries) {
  if (regions.empty() || regions.size() > size_t(wire::kMaxRegions) || num_libraries == 0 ||
      num_libraries > size_t(wire::kMaxLibs))
    return make_error(errc::internal, "worker_client::start: bad region or library count");
  std::unique_ptr<worker_client> w(new worker_client());
  auto dir = temp_dir::create("kevolve-worker-");
  if (!dir) return tl::unexpected(dir.error());
  w->dir_ = std::make_unique<temp_dir>(std::move(*dir));
  if (::geteuid() == 0 && o.sandbox) {
    if (::chown(w->dir_->path().c_str(), 65534, 65534) != 0) {
      // Not fatal: the worker just cannot write there (it may not anyway).
    }
  }
  w->log_path_ = w->dir_->path() / "output.log";
  const int log_fd = ::open(w->log_path_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (log_fd < 0) return make_error(errc::io_error, "cannot create worker log: " + std::string(std::strerror(errno)));

  int req[2], rep[2], libs[2];
  if (::pipe2(req, O_CLOEXEC) != 0 || ::pipe2(rep, O_CLOEXEC) != 0 ||
      ::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, libs) != 0) {
    ::close(log_fd);
    return make_error(errc::subprocess_error, "pipe: " + std::string(std::strerror(errno)));
  }
  const std::string exe = o.executable.string();
  std::vector<std::string> argv_s = o.launcher;
  argv_s.insert(argv_s.end(), {exe, std::to_string(regions.size()), std::to_string(num_libraries),
                                     std::to_string(o.address_space_bytes), !o.sandbox ? "0" : o.keep_user ? "2" : "1"});
  argv_s.insert(argv_s.end(), o.extra_args.begin(), o.extra_args.end());
  std::vector<char*> argv;
  for (auto& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<std::string> env_s = worker_environment(w->dir_->path(), o.threads);
  std::vector<char*> envp;
  for (auto& e : env_s) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::vector<int> sources = {req[0], rep[1], libs[1]};
  for (const auto* r : regions) sources.push_back(r->fd());
  const std::string dir_path = w->dir_->path().string();

  const pid_t pid = ::fork();
  if (pid < 0) return make_error(errc::subprocess_error, "fork: " + std::string(std::strerror(errno)));
  if (pid == 0) {
    // Child: async-signal-safe calls only.
    ::setpgid(0, 0);
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    // A batch system signals every process of a job (Slurm: SIGUSR1 before the
    // time limit, SIGTERM on preemption). The rank decides what to do; a worker
    // killed mid-call would turn a good candidate into a failure. The evaluator
    // itself stops workers with SIGKILL only.
    for (int sig : {SIGTERM, SIGINT, SIGHUP, SIGUSR1, SIGUSR2}) ::signal(sig, SIG_IGN);
    // Move every source above the target range first, then into place.
    int moved[3 + wire::kMaxRegions];
    size_t n = 0;
    for (int fd : sources) moved[n++] = ::fcntl(fd, F_DUPFD, 64);
    const int log_high = ::fcntl(log_fd, F_DUPFD, 64);
    ::dup2(moved[0], wire::kRequestFd);
    ::dup2(moved[1], wire::kReplyFd);
    ::dup2(moved[2], wire::kLibSocketFd);
    for (size_t i = 0; i < regions.size(); ++i) ::dup2(moved[3 + i], wire::kFirstRegionFd + int(i));
    ::dup2(log_high, 1);
    ::dup2(log_high, 2);
    const int devnull = ::open("/dev/null", O_RDONLY);
    ::dup2(devnull, 0);
    ::close_range(unsigned(wire::kLibSocketFd + 1), ~0U, 0);
    if (::chdir(dir_path.c_str()) != 0) ::_exit(wire::kExitSetupFailed);
    ::execve(argv[0], argv.data(), envp.data());
    ::_exit(wire::kExitSetupFailed);
  }
  ::setpgid(pid, pid);
  ::close(req[0]);
  ::close(rep[1]);
  ::close(libs[1]);
  ::close(log_fd);
  w->pid_ = pid;
  w->req_fd_ = req[1];
  w->rep_fd_ = rep[0];
  w->lib_fd_ = libs[0];
  w->num_libs_ = num_libraries;
  // A worker whose evaluator dies must not block on a full pipe forever.
  ::signal(SIGPIPE, SIG_IGN);
  return w;
}

expected<void> worker_client::load(const std::vector<std::filesystem::path>& libraries) {
  if (lib_fd_ < 0) return make_error(errc::internal, "worker_client::load: the libraries were already sent");
  if (libraries.size() != num_libs_)
    return make_error(errc::internal, "worker_client::load: " + std::to_string(libraries.size()) + " libraries for a worker started for " +
                                          std::to_string(num_libs_));
  std::vector<int> fds;
  auto close_all = [&] {
    for (int f : fds) ::close(f);
  };
  for (const auto& lib : libraries) {
    const int fd = ::open(lib.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      close_all();
      return make_error(errc::io_error, "cannot open kernel library " + lib.string() + ": " + std::strerror(errno));
    }
    fds.push_back(fd);
  }
  wire::lib_message m;
  m.count = uint32_t(fds.size());
  const ssize_t r = send_with_fds(lib_fd_, &m, sizeof m, fds);
  const int err = errno;
  close_all();
  ::close(lib_fd_);
  lib_fd_ = -1;
  // A worker that died while it started shows at its first request.
  if (r != ssize_t(sizeof m) && err != EPIPE && err != ECONNRESET)
    return make_error(errc::subprocess_error, "sending the kernel library to the worker: " + std::string(std::strerror(err)));
  return {};
}

worker_client::~worker_client() { shutdown(); }

call_outcome worker_client::fail_dead(call_outcome out, int status) {
  out.what = call_outcome::kind::crashed;
  out.detail = describe_worker_death(status);
  const std::string tail = output_tail(600);
  if (!tail.empty()) out.detail += "; last output: " + tail;
  pid_ = -1;
  return out;
}

call_outcome worker_client::request(wire::op code, uint32_t lib, uint32_t first_set, uint32_t reps,
                                    const std::vector<char>& payload, std::chrono::milliseconds timeout) {
  call_outcome out;
  if (pid_ <= 0 || req_fd_ < 0) {
    out.what = call_outcome::kind::protocol_error;
    out.detail = pid_ <= 0 ? "worker is not running" : "worker was released";
    return out;
  }
  // Bytes waiting before a request mean something other than the worker's
  // request loop wrote to the reply pipe.
  int pending = 0;
  if (::ioctl(rep_fd_, FIONREAD, &pending) == 0 && pending > 0) {
    out.what = call_outcome::kind::protocol_error;
    out.detail = "unexpected bytes on the reply pipe (a forged or late reply)";
    shutdown();
    return out;
  }
  wire::request q;
  q.code = code;
  q.lib = lib;
  q.first_set = first_set;
  q.reps = reps;
  q.payload_bytes = uint32_t(payload.size());
  q.nonce = nonce_rng_();
  const auto start = clock_type::now();
  const auto deadline = start + timeout;
  if (!write_all(req_fd_, &q, sizeof q) || (!payload.empty() && !write_all(req_fd_, payload.data(), payload.size()))) {
    int status = 0;
    ::waitpid(pid_, &status, 0);
    return fail_dead(out, status);
  }
  wire::reply r;
  int got = read_until(rep_fd_, &r, sizeof r, deadline);
  if (got == 1 && r.count > 0) {
    if (r.count > reps) got = 0;
    else {
      out.ns.resize(r.count);
      got = read_until(rep_fd_, out.ns.data(), r.count * sizeof(int64_t), deadline);
    }
  }
  out.wall_seconds = std::chrono::duration<double>(clock_type::now() - start).count();
  if (got == -1) {
    terminate_process_group(pid_, std::chrono::milliseconds(200));
    pid_ = -1;
    out.what = call_outcome::kind::timeout;
    out.detail = "no answer within " + std::to_string(timeout.count()) + " ms; killed (SIGTERM, then SIGKILL)";
    return out;
  }
  if (got == 0) {
    int status = 0;
    // The pipe closed: the process is gone or going.
    if (::waitpid(pid_, &status, 0) < 0) status = 0;
    ::kill(-pid_, SIGKILL);
    return fail_dead(out, status);
  }
  if (r.magic != wire::kMagic || r.nonce != q.nonce) {
    out.what = call_outcome::kind::protocol_error;
    out.detail = "the reply did not come from the worker's request loop (forged reply)";
    shutdown();
    return out;
  }
  if (r.status == wire::reply_status::bad_request) {
    out.what = call_outcome::kind::protocol_error;
    out.detail = "the worker rejected the request";
    return out;
  }
  if (r.status == wire::reply_status::left_running) {
    out.what = call_outcome::kind::left_running;
    out.detail = "after the call returned, a thread the kernel started would not stop: work hidden from the timer (" +
                 output_tail(300) + ")";
    return out;
  }
  if (r.status == wire::reply_status::kernel_error) {
    out.what = call_outcome::kind::kernel_error;
    out.rc = r.rc;
    out.detail = output_tail(600);  // what the kernel (or an emulator) said about it
  }
  return out;
}

call_outcome worker_client::setup(const std::vector<char>& payload, std::chrono::milliseconds timeout) {
  return request(wire::op::setup, 0, 0, 1, payload, timeout);
}

call_outcome worker_client::call(uint32_t lib, uint32_t set, std::chrono::milliseconds timeout) {
  return request(wire::op::call, lib, set, 1, {}, timeout);
}

call_outcome worker_client::time(uint32_t lib, uint32_t first_set, uint32_t reps, std::chrono::milliseconds timeout) {
  return request(wire::op::time, lib, first_set, reps, {}, timeout);
}

call_outcome worker_client::download(std::chrono::milliseconds timeout) {
  return request(wire::op::download, 0, 0, 1, {}, timeout);
}

call_outcome worker_client::profile(std::chrono::milliseconds timeout) {
  return request(wire::op::profile, 0, 0, 64, {}, timeout);
}

bool worker_client::still_running() {
  if (pid_ <= 0) return false;
  int status = 0;
  if (::waitpid(pid_, &status, WNOHANG) == 0) return true;
  ::kill(-pid_, SIGKILL);
  pid_ = -1;
  return false;
}

double worker_client::cpu_seconds() const {
  if (pid_ <= 0) return 0.0;
  std::ifstream in("/proc/" + std::to_string(pid_) + "/stat");
  std::string content((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t close_paren = content.rfind(')');
  if (close_paren == std::string::npos) return 0.0;
  std::istringstream ss(content.substr(close_paren + 2));
  std::string field;
  unsigned long long utime = 0, stime = 0;
  // Fields after "(comm)": state is field 3; utime 14, stime 15.
  for (int i = 3; i <= 15 && ss >> field; ++i) {
    if (i == 14) utime = std::strtoull(field.c_str(), nullptr, 10);
    if (i == 15) stime = std::strtoull(field.c_str(), nullptr, 10);
  }
  return double(utime + stime) / double(::sysconf(_SC_CLK_TCK));
}

double worker_client::live_thread_cpu_seconds() const {
  if (pid_ <= 0) return 0.0;
  double total = 0.0;
  std::error_code ec;
  for (const auto& task : std::filesystem::directory_iterator("/proc/" + std::to_string(pid_) + "/task", ec)) {
    std::ifstream in(task.path() / "schedstat");
    unsigned long long run_ns = 0;
    if (in >> run_ns) total += double(run_ns) * 1e-9;
  }
  return total;
}

std::string worker_client::output_tail(size_t max_bytes) const {
  std::ifstream in(log_path_, std::ios::binary);
  if (!in) return {};
  in.seekg(0, std::ios::end);
  const std::streamoff size = in.tellg();
  const std::streamoff start = size > std::streamoff(max_bytes) ? size - std::streamoff(max_bytes) : 0;
  in.seekg(start);
  std::string s(static_cast<size_t>(size - start), '\0');
  in.read(s.data(), std::streamsize(s.size()));
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
  return s;
}

void worker_client::release() {
  // A worker still waiting for its libraries ends when their socket closes.
  if (lib_fd_ >= 0) ::close(lib_fd_);
  lib_fd_ = -1;
  if (pid_ <= 0 || req_fd_ < 0) return;
  wire::request q;
  q.code = wire::op::quit;
  write_all(req_fd_, &q, sizeof q);
  ::close(req_fd_);
  req_fd_ = -1;
}

expected<int> worker_client::wait_exit(std::chrono::milliseconds timeout) {
  if (pid_ <= 0) return make_error(errc::subprocess_error, "the worker is not running");
  release();
  const auto deadline = clock_type::now() + timeout;
  int status = 0;
  while (clock_type::now() < deadline) {
    const pid_t r = ::waitpid(pid_, &status, WNOHANG);
    if (r == pid_ || (r < 0 && errno == ECHILD)) {
      ::kill(-pid_, SIGKILL);  // whatever it left behind in its group
      pid_ = -1;
      return status;
    }
    ::usleep(2000);
  }
  const int pid = pid_;
  shutdown();
  return make_error(errc::subprocess_error, "process " + std::to_string(pid) + " did not exit within " +
                                       std::to_string(timeout.count() / 1000) + " s and was killed");
}

void worker_client::shutdown() {
  if (pid_ > 0) {
    release();
    const auto deadline = clock_type::now() + std::chrono::milliseconds(300);
    int status = 0;
    bool reaped = false;
    while (clock_type::now() < deadline) {
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        reaped = true;
        break;
      }
      ::usleep(1000);
    }
    if (!reaped) terminate_process_group(pid_, std::chrono::milliseconds(200));
    ::kill(-pid_, SIGKILL);
    pid_ = -1;
  }
  if (req_fd_ >= 0) ::close(req_fd_);
  if (rep_fd_ >= 0) ::close(rep_fd_);
  if (lib_fd_ >= 0) ::close(lib_fd_);
  req_fd_ = rep_fd_ = lib_fd_ = -1;
  dir_.reset();
}

}  // namespace kevolve::eval
