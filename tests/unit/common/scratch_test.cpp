// Temporary directories live under one scratch root per process; a process
// killed before it could clean up (mpirun and batch systems SIGKILL ranks)
// leaves its root behind, and the next kevolve process on the host removes it.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "common/fs.h"
#include "common/scratch.h"

namespace kevolve {
namespace {
namespace fs = std::filesystem;

// A pid that belonged to a process which has ended.
pid_t dead_pid() {
  const pid_t pid = ::fork();
  if (pid == 0) ::_exit(0);
  int status = 0;
  ::waitpid(pid, &status, 0);
  return pid;
}

fs::path make_root(const fs::path& dir, pid_t pid, const std::string& host, const std::string& suffix) {
  const fs::path root = dir / ("kevolve-" + std::to_string(pid) + "@" + host + "-" + suffix);
  fs::create_directories(root / "kevolve-worker-abcdef");
  std::ofstream(root / "kevolve-worker-abcdef" / "output.log") << "left by a killed rank\n";
  return root;
}

TEST(Scratch, TemporaryDirectoriesLiveUnderThisProcesssRoot) {
  auto t = temp_dir::create("kevolve-scratch-test-");
  ASSERT_TRUE(t.has_value()) << t.error().message;
  auto root = process_scratch_root();
  ASSERT_TRUE(root.has_value());
  EXPECT_EQ(t->path().parent_path(), *root);
  const std::string name = root->filename().string();
  EXPECT_EQ(name.rfind("kevolve-" + std::to_string(::getpid()) + "@" + scratch_host_name() + "-", 0), 0u) << name;
  struct stat st {};
  ASSERT_EQ(::stat(root->c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0711u);  // workers running as nobody reach their dirs, list nothing
}

TEST(Scratch, RootsOfGoneProcessesOnThisHostAreRemovedOthersKept) {
  auto base = temp_dir::create("kevolve-scratch-base-");
  ASSERT_TRUE(base.has_value());
  const std::string host = scratch_host_name();
  const pid_t gone = dead_pid();
  const fs::path orphan = make_root(base->path(), gone, host, "aaaaaa");
  const fs::path live = make_root(base->path(), ::getpid(), host, "bbbbbb");
  const fs::path elsewhere = make_root(base->path(), gone, host + "x", "cccccc");  // shared $TMPDIR, other node
  const fs::path other = base->path() / "kevolve-worker-dddddd";                   // not a scratch root
  fs::create_directories(other);
  EXPECT_EQ(remove_orphaned_scratch(base->path(), host), 1u);
  EXPECT_FALSE(fs::exists(orphan));
  EXPECT_TRUE(fs::exists(live / "kevolve-worker-abcdef" / "output.log"));
  EXPECT_TRUE(fs::exists(elsewhere));
  EXPECT_TRUE(fs::exists(other));
}

TEST(Scratch, AKilledProcessesRootIsRemovedByTheNextAndANormalExitRemovesItsOwn) {
  auto base = temp_dir::create("kevolve-scratch-base-");
  ASSERT_TRUE(base.has_value());
  // A child with its own $TMPDIR makes a temporary dir, says where, and is killed.
  int pipefd[2];
  ASSERT_EQ(::pipe(pipefd), 0);
  auto child = [&](bool killed) {
    const pid_t pid = ::fork();
    if (pid == 0) {
      ::setenv("TMPDIR", base->path().c_str(), 1);
      // The child is a new process: its first temporary dir makes a new root.
      auto t = temp_dir::create("kevolve-worker-");
      const std::string where = t ? t->path().parent_path().string() : "";
      if (::write(pipefd[1], (where + "\n").data(), where.size() + 1) < 0) ::_exit(3);
      if (killed) {
        ::raise(SIGKILL);
      }
      std::exit(0);  // atexit: the root goes
    }
    char buf[4096] = {};
    size_t n = 0;
    while (n < sizeof buf - 1 && ::read(pipefd[0], buf + n, 1) == 1 && buf[n] != '\n') ++n;
    buf[n] = 0;
    int status = 0;
    ::waitpid(pid, &status, 0);
    return fs::path(buf);
  };
  const fs::path killed_root = child(true);
  ASSERT_FALSE(killed_root.empty());
  EXPECT_EQ(killed_root.parent_path(), base->path());
  EXPECT_TRUE(fs::exists(killed_root));  // nobody removed it
  const fs::path clean_root = child(false);
  EXPECT_FALSE(fs::exists(killed_root)) << "the next process did not remove the killed one's root";
  EXPECT_FALSE(fs::exists(clean_root)) << "a normal exit left its root";
  ::close(pipefd[0]);
  ::close(pipefd[1]);
}

}  // namespace
}  // namespace kevolve
