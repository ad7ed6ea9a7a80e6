#include "eval/torch_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "common/paths.h"
#include "common/subprocess.h"
#include "eval/torch_baseline.h"

namespace kevolve::eval {
namespace fs = std::filesystem;
using clock_type = std::chrono::steady_clock;

fs::path torch_scratch_root(size_t bytes) {
  std::error_code ec;
  if (bytes > (size_t(64) << 20) && fs::is_directory("/dev/shm", ec) && ::access("/dev/shm", W_OK) == 0) return "/dev/shm";
  return {};
}

expected<std::unique_ptr<torch_process>> torch_process::start(const fs::path& python, int threads, size_t tensor_bytes) {
  std::unique_ptr<torch_process> p(new torch_process());
  auto dir = temp_dir::create("kevolve-torchref-", torch_scratch_root(tensor_bytes));
  if (!dir) return tl::unexpected(dir.error());
  p->dir_ = std::make_unique<temp_dir>(std::move(*dir));
  int in_pipe[2], out_pipe[2];
  if (::pipe2(in_pipe, O_CLOEXEC) != 0 || ::pipe2(out_pipe, O_CLOEXEC) != 0)
    return make_error(errc::subprocess_error, std::string("pipe: ") + std::strerror(errno));
  const std::vector<std::string> argv = {python.string(), (data_root() / "src" / "eval" / "torch_baseline.py").string(),
                                         p->dir().string(), "serve"};
  const std::vector<std::string> env = torch_environment(python, p->dir(), threads);
  std::vector<char*> args, envp;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  for (const auto& e : env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  const std::string err_path = (p->dir() / "stderr.txt").string();
  const std::string cwd = p->dir().string();
  const pid_t pid = ::fork();
  if (pid < 0) return make_error(errc::subprocess_error, std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    ::setpgid(0, 0);
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    ::dup2(in_pipe[0], 0);
    ::dup2(out_pipe[1], 1);
    const int err = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (err >= 0) ::dup2(err, 2);
    if (::chdir(cwd.c_str()) != 0) ::_exit(127);
    ::execve(args[0], args.data(), envp.data());
    ::_exit(127);
  }
  ::close(in_pipe[0]);
  ::close(out_pipe[1]);
  p->pid_ = pid;
  p->to_child_ = in_pipe[1];
  p->from_child_ = out_pipe[0];
  return p;
}

torch_process::~torch_process() { stop(); }

void torch_process::stop() {
  if (to_child_ >= 0) ::close(to_child_);
  to_child_ = -1;
  if (pid_ > 0) terminate_process_group(pid_, std::chrono::milliseconds(2000));
  pid_ = -1;
  if (from_child_ >= 0) ::close(from_child_);
  from_child_ = -1;
}

std::string torch_process::stderr_tail() const {
  auto text = read_file(dir() / "stderr.txt");
  if (!text || text->empty()) return "no output";
  std::string t = *text;
  while (!t.empty() && (t.back() == '\n' || t.back() == ' ')) t.pop_back();
  const size_t nl = t.rfind('\n');
  return nl == std::string::npos ? t : t.substr(nl + 1);
}

expected<nlohmann::json> torch_process::request(const nlohmann::json& req, std::chrono::milliseconds timeout) {
  if (pid_ <= 0) return make_error(errc::subprocess_error, "the PyTorch process is not running");
  const std::string line = req.dump() + "\n";
  for (size_t done = 0; done < line.size();) {
    const ssize_t n = ::write(to_child_, line.data() + done, line.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const std::string why = "the PyTorch process exited: " + stderr_tail();
      stop();
      return make_error(errc::subprocess_error, why);
    }
    done += size_t(n);
  }
  const auto deadline = clock_type::now() + timeout;
  for (;;) {
    if (const size_t nl = pending_.find('\n'); nl != std::string::npos) {
      const std::string answer = pending_.substr(0, nl);
      pending_.erase(0, nl + 1);
      auto j = nlohmann::json::parse(answer, nullptr, false);
      if (j.is_discarded() || !j.is_object()) {
        stop();
        return make_error(errc::subprocess_error, "the PyTorch process answered something that is not JSON: " + answer.substr(0, 200));
      }
      return j;
    }
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock_type::now()).count();
    if (left <= 0) {
      stop();
      return make_error(errc::subprocess_error, "the PyTorch process took longer than " + std::to_string(timeout.count() / 1000) + " s");
    }
    pollfd pfd{from_child_, POLLIN, 0};
    const int r = ::poll(&pfd, 1, int(std::min<long long>(left, 1000)));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) continue;
    char buf[65536];
    const ssize_t n = ::read(from_child_, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const std::string why = "the PyTorch process exited: " + stderr_tail();
      stop();
      return make_error(errc::subprocess_error, why);
    }
    pending_.append(buf, size_t(n));
  }
}

}  // namespace kevolve::eval
