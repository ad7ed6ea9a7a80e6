#include "common/subprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <set>

namespace kevolve {
namespace {

using clock_type = std::chrono::steady_clock;

std::vector<char*> to_cstrings(const std::vector<std::string>& v) {
  std::vector<char*> out;
  out.reserve(v.size() + 1);
  for (const auto& s : v) out.push_back(const_cast<char*>(s.c_str()));
  out.push_back(nullptr);
  return out;
}

// The pausable tools: their process groups, how many quiet_tools are alive,
// and the time spent quiet so far (time limits leave it out).
std::mutex g_pause_mu;
std::set<pid_t> g_pausable;
int g_quiet = 0;
clock_type::time_point g_quiet_since;
clock_type::duration g_quiet_total{};
thread_local bool t_pausable = false;

clock_type::duration quiet_so_far() {
  std::lock_guard<std::mutex> lock(g_pause_mu);
  return g_quiet_total + (g_quiet > 0 ? clock_type::now() - g_quiet_since : clock_type::duration{});
}

}  // namespace

pausable_tools::pausable_tools() : before_(t_pausable) { t_pausable = true; }
pausable_tools::~pausable_tools() { t_pausable = before_; }

quiet_tools::quiet_tools(bool active) : active_(active) {
  if (!active_) return;
  std::lock_guard<std::mutex> lock(g_pause_mu);
  if (g_quiet++ == 0) {
    g_quiet_since = clock_type::now();
    for (pid_t g : g_pausable) ::kill(-g, SIGSTOP);
  }
}

quiet_tools::~quiet_tools() {
  if (!active_) return;
  std::lock_guard<std::mutex> lock(g_pause_mu);
  if (--g_quiet == 0) {
    g_quiet_total += clock_type::now() - g_quiet_since;
    for (pid_t g : g_pausable) ::kill(-g, SIGCONT);
  }
}

size_t quiet_tools::running() {
  std::lock_guard<std::mutex> lock(g_pause_mu);
  return g_pausable.size();
}

int terminate_process_group(int pid, std::chrono::milliseconds grace) {
  int status = 0;
  ::kill(-pid, SIGTERM);
  ::kill(pid, SIGTERM);
  const auto deadline = clock_type::now() + grace;
  while (clock_type::now() < deadline) {
    const pid_t r = ::waitpid(pid, &status, WNOHANG);
    if (r == pid) {
      ::kill(-pid, SIGKILL);  // stragglers in the group
      return status;
    }
    ::usleep(2000);
  }
  ::kill(-pid, SIGKILL);
  ::kill(pid, SIGKILL);
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return status;
}

expected<subprocess_result> run_subprocess(const std::vector<std::string>& argv,
                                           const subprocess_options& options) {
  if (argv.empty()) return make_error(errc::internal, "run_subprocess: empty argv");
  int out_pipe[2];
  if (::pipe2(out_pipe, O_CLOEXEC) != 0)
    return make_error(errc::subprocess_error, std::string("pipe: ") + std::strerror(errno));

  auto args = to_cstrings(argv);
  std::vector<char*> envp;
  if (options.env) envp = to_cstrings(*options.env);

  const auto start = clock_type::now();
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(out_pipe[0]);
    ::close(out_pipe[1]);
    return make_error(errc::subprocess_error, std::string("fork: ") + std::strerror(errno));
  }
  if (pid == 0) {
    // Child: only async-signal-safe calls until exec.
    ::setpgid(0, 0);
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    // A batch system's warning signals (Slurm's --signal) are for kevolve,
    // not for its compilers: ignored here, and across exec.
    struct sigaction ignore = {};
    ignore.sa_handler = SIG_IGN;
    ::sigaction(SIGUSR1, &ignore, nullptr);
    ::sigaction(SIGUSR2, &ignore, nullptr);
    ::dup2(out_pipe[1], 1);
    ::dup2(out_pipe[1], 2);
    const int devnull = ::open("/dev/null", O_RDONLY);
    if (devnull >= 0) ::dup2(devnull, 0);
    if (!options.cwd.empty() && ::chdir(options.cwd.c_str()) != 0) ::_exit(126);
    if (options.env)
      ::execve(args[0], args.data(), envp.data());
    else
      ::execvp(args[0], args.data());
    const char msg[] = "exec failed\n";
    (void)!::write(2, msg, sizeof msg - 1);
    ::_exit(127);
  }
  ::setpgid(pid, pid);
  ::close(out_pipe[1]);
  const bool pausable = t_pausable;
  const auto quiet_at_start = pausable ? quiet_so_far() : clock_type::duration{};
  if (pausable) {
    std::lock_guard<std::mutex> lock(g_pause_mu);
    g_pausable.insert(pid);
    if (g_quiet > 0) ::kill(-pid, SIGSTOP);
  }

  subprocess_result result;
  auto deadline = start + options.timeout;
  char buf[65536];
  bool open = true;
  bool exited = false;
  int status = 0;
  while (open) {
    // A background grandchild may keep the pipe open after the child exits:
    // the child's exit ends the wait (after draining what is there).
    if (!exited && ::waitpid(pid, &status, WNOHANG) == pid) exited = true;
    if (pausable) deadline = start + options.timeout + (quiet_so_far() - quiet_at_start);
    const auto now = clock_type::now();
    if (now >= deadline) {
      result.timed_out = true;
      break;
    }
    const int wait_ms = exited ? 0 : std::min<int>(
        50, static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now).count()) + 1);
    pollfd pfd{out_pipe[0], POLLIN, 0};
    const int pr = ::poll(&pfd, 1, wait_ms);
    if (pr < 0 && errno == EINTR) continue;
    if (pr == 0 && exited) break;
    if (pr <= 0) continue;
    const ssize_t n = ::read(out_pipe[0], buf, sizeof buf);
    if (n > 0) {
      result.output.append(buf, static_cast<size_t>(n));
      if (options.on_output) options.on_output(std::string_view(buf, static_cast<size_t>(n)));
      if (result.output.size() > 2 * options.max_output_bytes)
        result.output.erase(0, result.output.size() - options.max_output_bytes);
    } else if (n == 0 || (n < 0 && errno != EINTR)) {
      open = false;
    }
  }
  ::close(out_pipe[0]);
  if (pausable) {
    std::lock_guard<std::mutex> lock(g_pause_mu);
    g_pausable.erase(pid);
    ::kill(-pid, SIGCONT);  // a stopped group cannot take SIGTERM
  }

  if (result.timed_out) {
    status = terminate_process_group(pid, std::chrono::milliseconds(500));
  } else {
    if (!exited)
      while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
    ::kill(-pid, SIGKILL);  // nothing of the group outlives the call
  }
  result.seconds = std::chrono::duration<double>(clock_type::now() - start).count();
  if (result.output.size() > options.max_output_bytes)
    result.output.erase(0, result.output.size() - options.max_output_bytes);
  if (!result.timed_out) {
    if (WIFSIGNALED(status)) result.signal = WTERMSIG(status);
    if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  }
  return result;
}

}  // namespace kevolve
