#include "eval/thread_parker.h"

#include <fcntl.h>
#include <linux/futex.h>
#include <sched.h>
#include <signal.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace kevolve::eval {
namespace {

// Parked threads wait until the generation moves on. `parking` is set while
// a park is in progress: a signal that arrives later (one a thread had
// blocked) finds it clear and returns at once.
std::atomic<uint32_t> g_generation{0};
std::atomic<int> g_parking{0};
// The threads parked in this round, by id (a thread's pending signal from an
// earlier round must not stand in for another thread).
constexpr int kMaxParked = 4096;
std::atomic<int> g_arrived{0};
std::atomic<pid_t> g_parked[kMaxParked];
int g_task_dir = -1;

struct linux_dirent64 {
  uint64_t ino;
  int64_t off;
  unsigned short reclen;
  unsigned char type;
  char name[1];
};

static_assert(sizeof(std::atomic<uint32_t>) == sizeof(uint32_t), "futex word");

void on_park(int) {
  const int saved = errno;
  const uint32_t gen = g_generation.load();  // before `parking`: see release()
  if (g_parking.load()) {
    const int slot = g_arrived.fetch_add(1);
    if (slot < kMaxParked) g_parked[slot].store(pid_t(::syscall(SYS_gettid)));
    while (g_generation.load() == gen)
      ::syscall(SYS_futex, reinterpret_cast<uint32_t*>(&g_generation), FUTEX_WAIT_PRIVATE, gen, nullptr, nullptr, 0);
  }
  errno = saved;
}

// The threads of this process now, from the directory opened at install.
std::vector<pid_t> list_threads() {
  std::vector<pid_t> tids;
  if (::lseek(g_task_dir, 0, SEEK_SET) != 0) return tids;
  alignas(8) char buf[4096];
  for (;;) {
    const long n = ::syscall(SYS_getdents64, g_task_dir, buf, sizeof buf);
    if (n <= 0) break;
    for (long off = 0; off < n;) {
      const auto* d = reinterpret_cast<const linux_dirent64*>(buf + off);
      if (d->name[0] >= '0' && d->name[0] <= '9') tids.push_back(pid_t(std::atol(d->name)));
      off += d->reclen;
    }
  }
  return tids;
}

bool alive(pid_t pid, pid_t tid) { return ::syscall(SYS_tgkill, pid, tid, 0) == 0 || errno != ESRCH; }

// /proc/self/task/TID/stat, or an empty string when the thread is gone.
std::string task_stat(pid_t tid) {
  const std::string path = std::to_string(tid) + "/stat";
  const int fd = ::openat(g_task_dir, path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return {};
  char buf[512];
  const ssize_t n = ::read(fd, buf, sizeof buf - 1);
  ::close(fd);
  return n > 0 ? std::string(buf, size_t(n)) : std::string();
}

// Field `field` of a stat line as proc(5) numbers them (from 3 on, after
// "(comm)", which may hold spaces), or 0 when the line has no such field.
unsigned long long stat_field(const std::string& line, int field) {
  const size_t close = line.rfind(')');
  if (close == std::string::npos) return 0;
  const char* p = line.c_str() + close;
  for (int f = 2; f < field && p; ++f) p = std::strchr(p + 1, ' ');  // to the space before `field`
  return p ? std::strtoull(p + 1, nullptr, 10) : 0;
}

// PF_EXITING in the flags (field 9): the thread runs no more user code (a
// thread the kernel joined, still on its way out).
bool exiting(pid_t tid) {
  const std::string line = task_stat(tid);
  return line.empty() || (stat_field(line, 9) & 0x4u) != 0;  // empty: gone already
}

// The worker's own threads (thread_parker.h): id and start time (field 22).
struct own_thread {
  pid_t tid;
  unsigned long long start;
};
std::vector<own_thread> g_own;

bool own(pid_t tid) {
  for (const own_thread& t : g_own)
    if (t.tid == tid) return stat_field(task_stat(tid), 22) == t.start;
  return false;
}

bool parked(pid_t tid) {
  const int n = std::min(g_arrived.load(), kMaxParked);
  for (int i = 0; i < n; ++i)
    if (g_parked[i].load() == tid) return true;
  return false;
}

}  // namespace

std::string thread_parker::install() {
  struct sigaction sa;
  std::memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_park;
  sa.sa_flags = SA_RESTART;
  sigemptyset(&sa.sa_mask);
  if (::sigaction(signal_number(), &sa, nullptr) != 0) return std::string("sigaction: ") + std::strerror(errno);
  g_task_dir = ::open("/proc/self/task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (g_task_dir < 0) return std::string("opening /proc/self/task: ") + std::strerror(errno);
  const pid_t self = pid_t(::syscall(SYS_gettid));
  for (const pid_t tid : list_threads()) {
    const std::string line = task_stat(tid);
    if (tid != self && !line.empty()) g_own.push_back({tid, stat_field(line, 22)});
  }
  return {};
}

bool thread_parker::park_others(std::chrono::milliseconds deadline, std::string& why) {
  const pid_t pid = ::getpid();
  const pid_t self = pid_t(::syscall(SYS_gettid));
  std::vector<pid_t> signalled;
  g_arrived.store(0);
  g_parking.store(1);
  const auto until = std::chrono::steady_clock::now() + deadline;
  for (int round = 0;; ++round) {
    // Every thread signalled so far stopped before this round's listing:
    // parked threads start no new ones, so a listing with no new thread in it
    // means none is left running. A signalled thread that exited instead ran
    // on after the call returned and finished unseen.
    int running = 0;
    for (const pid_t tid : signalled) {
      if (parked(tid)) continue;
      if (!alive(pid, tid)) {
        why = "a thread ran on after the call returned and exited without stopping";
        return false;
      }
      ++running;
    }
    bool added = false;
    for (const pid_t tid : list_threads()) {
      if (tid == self || std::find(signalled.begin(), signalled.end(), tid) != signalled.end() || exiting(tid) ||
          own(tid))
        continue;
      if (::syscall(SYS_tgkill, pid, tid, signal_number()) == 0) {
        signalled.push_back(tid);
        added = true;
      }
    }
    if (running == 0 && !added) return true;
    if (std::chrono::steady_clock::now() > until) {
      why = std::to_string(running) + " of " + std::to_string(signalled.size()) +
            " other threads did not stop within " + std::to_string(deadline.count()) + " ms";
      return false;
    }
    if (round < 64) ::sched_yield();
    else {
      const timespec pause{0, 100000};
      ::nanosleep(&pause, nullptr);
    }
  }
}

bool thread_parker::park_after_call(const char* program, std::chrono::milliseconds deadline) {
  std::string why;
  if (park_others(deadline, why)) return true;
  std::fprintf(stderr, "%s: after the call returned, %s\n", program, why.c_str());
  std::fflush(stderr);
  return false;
}

void thread_parker::release() {
  g_parking.store(0);
  g_generation.fetch_add(1);
  ::syscall(SYS_futex, reinterpret_cast<uint32_t*>(&g_generation), FUTEX_WAKE_PRIVATE, INT32_MAX, nullptr, nullptr, 0);
}

}  // namespace kevolve::eval
