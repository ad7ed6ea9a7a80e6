// run_subprocess runs compilers and probes: their output must come back, a
// hung tool must not hang kevolve, and nothing the tool started may survive.
#include <gtest/gtest.h>

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "common/fs.h"
#include "common/subprocess.h"

namespace kevolve {
namespace {
namespace fs = std::filesystem;
using namespace std::chrono_literals;
using steady = std::chrono::steady_clock;

double seconds_since(steady::time_point t0) { return std::chrono::duration<double>(steady::now() - t0).count(); }

// Live (not zombie) processes whose process group is `pgid`, from /proc.
std::vector<int> live_members_of_group(int pgid) {
  std::vector<int> out;
  for (const auto& e : fs::directory_iterator("/proc")) {
    const std::string name = e.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream in(e.path() / "stat");
    std::string stat;
    if (!std::getline(in, stat)) continue;
    // pid (comm) state ppid pgrp ...; comm may hold spaces, so parse after ')'.
    const size_t close = stat.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream rest(stat.substr(close + 1));
    char state = '?';
    int ppid = 0, pgrp = 0;
    rest >> state >> ppid >> pgrp;
    if (pgrp == pgid && state != 'Z' && state != 'X') out.push_back(std::stoi(name));
  }
  return out;
}

bool process_alive(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat;
  if (!std::getline(in, stat)) return false;
  const size_t close = stat.rfind(')');
  const char state = close + 2 < stat.size() ? stat[close + 2] : '?';
  return state != 'Z' && state != 'X';
}

TEST(run_subprocess, captures_stdout_stderr_and_exit_code) {
  auto r = run_subprocess({"sh", "-c", "echo to-stdout; echo to-stderr >&2; exit 3"});
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_EQ(r->exit_code, 3);
  EXPECT_EQ(r->signal, 0);
  EXPECT_FALSE(r->timed_out);
  EXPECT_FALSE(r->ok());
  EXPECT_NE(r->output.find("to-stdout\n"), std::string::npos) << r->output;
  EXPECT_NE(r->output.find("to-stderr\n"), std::string::npos) << r->output;
}

TEST(run_subprocess, success_is_ok_and_output_is_exact) {
  auto r = run_subprocess({"printf", "%s|%s", "a b", "c"});
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_TRUE(r->ok());
  EXPECT_EQ(r->exit_code, 0);
  EXPECT_EQ(r->output, "a b|c");  // arguments are passed as is, no shell splitting
  EXPECT_GE(r->seconds, 0.0);
  EXPECT_LT(r->seconds, 5.0);
}

TEST(run_subprocess, large_output_is_read_while_the_child_runs) {
  // 4 MB is far beyond a pipe buffer: a reader that only drains at exit hangs.
  subprocess_options o = timeout_options(20s);
  o.max_output_bytes = 8 << 20;
  auto r = run_subprocess({"head", "-c", "4000000", "/dev/zero"}, o);
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_TRUE(r->ok()) << "timed_out=" << r->timed_out;
  EXPECT_EQ(r->output.size(), 4000000u);
}

TEST(run_subprocess, keeps_the_tail_beyond_max_output_bytes) {
  subprocess_options o;
  o.max_output_bytes = 100;
  auto r = run_subprocess({"sh", "-c", "i=0; while [ $i -lt 3000 ]; do echo line$i; i=$((i+1)); done"}, o);
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_TRUE(r->ok());
  EXPECT_LE(r->output.size(), 100u);
  EXPECT_GE(r->output.size(), 90u);
  const std::string tail = "line2998\nline2999\n";
  ASSERT_GE(r->output.size(), tail.size());
  EXPECT_EQ(r->output.substr(r->output.size() - tail.size()), tail) << r->output;
}

TEST(run_subprocess, reports_the_terminating_signal) {
  auto r = run_subprocess({"sh", "-c", "kill -SEGV $$"});
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_EQ(r->signal, SIGSEGV);
  EXPECT_FALSE(r->timed_out);
  EXPECT_FALSE(r->ok());
}

TEST(run_subprocess, runs_in_the_given_directory) {
  auto dir = temp_dir::create("kevolve-subprocess-test-");
  ASSERT_TRUE(dir.has_value()) << dir.error().message;
  subprocess_options o;
  o.cwd = dir->path().string();
  auto r = run_subprocess({"pwd", "-P"}, o);
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_TRUE(r->ok());
  EXPECT_EQ(r->output, fs::canonical(dir->path()).string() + "\n");
}

TEST(run_subprocess, replaces_the_environment_when_given) {
  ::setenv("KEVOLVE_SUBPROCESS_TEST_LEAK", "leaked", 1);
  subprocess_options o;
  o.env = std::vector<std::string>{"ONLY_THIS=1", "LANG=C"};
  auto r = run_subprocess({"/bin/sh", "-c", "echo \"$ONLY_THIS:${KEVOLVE_SUBPROCESS_TEST_LEAK:-unset}\""}, o);
  ::unsetenv("KEVOLVE_SUBPROCESS_TEST_LEAK");
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_TRUE(r->ok()) << r->output;
  EXPECT_EQ(r->output, "1:unset\n");
}

TEST(run_subprocess, a_missing_program_does_not_succeed) {
  auto r = run_subprocess({"/nonexistent/kevolve-no-such-tool"});
  if (!r) {
    EXPECT_EQ(r.error().code, errc::subprocess_error);
    return;
  }
  EXPECT_FALSE(r->ok());
  EXPECT_EQ(r->exit_code, 127);
}

TEST(run_subprocess, kills_a_child_at_the_timeout) {
  const auto t0 = steady::now();
  auto r = run_subprocess({"sleep", "10"}, timeout_options(200ms));
  const double wall = seconds_since(t0);
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_TRUE(r->timed_out);
  EXPECT_FALSE(r->ok());
  EXPECT_GE(wall, 0.19);
  EXPECT_LT(wall, 2.0);
  EXPECT_LT(r->seconds, 2.0);
}

TEST(run_subprocess, kills_a_child_that_ignores_sigterm) {
  const auto t0 = steady::now();
  auto r = run_subprocess({"sh", "-c", "trap '' TERM; echo armed; while :; do sleep 1; done"}, timeout_options(300ms));
  const double wall = seconds_since(t0);
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_TRUE(r->timed_out);
  EXPECT_NE(r->output.find("armed"), std::string::npos) << "output before the timeout is kept";
  EXPECT_LT(wall, 2.0);
}

TEST(run_subprocess, leaves_no_process_of_its_group_alive_after_a_timeout) {
  // The shell prints its pid (= its process group, run_subprocess makes one)
  // and the pid of a background grandchild that keeps the pipe open.
  const auto t0 = steady::now();
  auto r = run_subprocess({"sh", "-c", "echo $$; sleep 30 & echo $!; sleep 30"}, timeout_options(200ms));
  const double wall = seconds_since(t0);
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_TRUE(r->timed_out);
  EXPECT_LT(wall, 2.0);
  std::istringstream lines(r->output);
  int group = 0, grandchild = 0;
  ASSERT_TRUE(lines >> group >> grandchild) << "output: " << r->output;
  ASSERT_GT(group, 1);
  ASSERT_GT(grandchild, 1);
  // The /proc scan must see live processes, or the checks below prove nothing.
  ASSERT_FALSE(live_members_of_group(::getpgrp()).empty());
  ASSERT_TRUE(process_alive(::getpid()));
  // SIGKILL is asynchronous: give the kernel a moment to finish the exits.
  const auto deadline = steady::now() + 2s;
  while (steady::now() < deadline && (!live_members_of_group(group).empty() || process_alive(grandchild)))
    std::this_thread::sleep_for(10ms);
  EXPECT_TRUE(live_members_of_group(group).empty());
  EXPECT_FALSE(process_alive(grandchild)) << "background grandchild " << grandchild << " survived";
}

TEST(run_subprocess, leaves_no_background_process_after_a_normal_exit) {
  // The grandchild detaches its output, so the pipe closes when sh exits.
  auto r = run_subprocess({"sh", "-c", "sleep 30 >/dev/null 2>&1 & echo $!; exit 0"}, timeout_options(5s));
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_FALSE(r->timed_out);
  EXPECT_EQ(r->exit_code, 0);
  const int grandchild = std::atoi(r->output.c_str());
  ASSERT_GT(grandchild, 1) << r->output;
  const auto deadline = steady::now() + 2s;
  while (steady::now() < deadline && process_alive(grandchild)) std::this_thread::sleep_for(10ms);
  EXPECT_FALSE(process_alive(grandchild)) << "background process " << grandchild << " outlived the call";
}

}  // namespace
}  // namespace kevolve

namespace kevolve {
namespace {

// A pausable tool (the compile-ahead pool's compilers) makes no progress
// while a quiet_tools object lives, resumes after it, and its time limit
// does not count the pause.
TEST(Subprocess, PausableToolsStopWhileQuietAndTheirLimitSkipsThePause) {
  auto dir = temp_dir::create("kevolve-quiet-");
  ASSERT_TRUE(dir.has_value());
  const std::string file = (dir->path() / "ticks").string();
  std::thread tool([&] {
    pausable_tools pausable;
    // about 0.6 s of ticks (twice that on a loaded machine), with a limit of
    // 1.6 s: passes only if the 1.5 s pause is not counted
    auto r = run_subprocess({"sh", "-c", "i=0; while [ $i -lt 30 ]; do echo $i >> " + file + "; i=$((i+1)); sleep 0.02; done"},
                            timeout_options(std::chrono::milliseconds(1600)));
    ASSERT_TRUE(r.has_value());
    EXPECT_TRUE(r->ok()) << "timed out: " << r->timed_out << " after " << r->seconds << " s";
  });
  auto lines = [&] {
    auto t = read_file(file);
    return t ? std::count(t->begin(), t->end(), '\n') : 0;
  };
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  long during = 0;
  {
    quiet_tools quiet;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));  // the stop is a signal: let it land
    const long at_start = lines();
    std::this_thread::sleep_for(std::chrono::milliseconds(1400));
    during = lines() - at_start;
    EXPECT_GE(quiet_tools::running(), 1u);
  }
  tool.join();
  EXPECT_LE(during, 1) << "the tool kept running while quiet";
  EXPECT_EQ(lines(), 30);
}

}  // namespace
}  // namespace kevolve
