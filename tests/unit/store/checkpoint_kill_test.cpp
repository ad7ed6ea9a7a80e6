// Atomic checkpoints: a writer killed at any moment leaves the previous
// store readable at its path (or the new one, when the rename was done),
// never a torn file.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <map>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "common/fs.h"
#include "store/hdf5_store.h"
#include "store_fixtures.h"

namespace kevolve::store {
namespace {

namespace fs = std::filesystem;
using namespace testing;

TEST(StoreCheckpoint, KilledWriterLeavesTheOldOrTheNewStore) {
  auto dir = temp_dir::create("kevolve-store-kill-");
  ASSERT_TRUE(dir.has_value());
  const fs::path p = dir->path() / "sweep.h5";
  const sweep_record old_record = make_big_record("old", 2000, 512);
  const sweep_record new_record = make_big_record("new", 30000, 2048);  // ~60 MiB: a write takes a while
  // How long a full write takes here, to spread the kills over it.
  const auto t0 = std::chrono::steady_clock::now();
  ASSERT_TRUE(write_store(dir->path() / "timing.h5", new_record).has_value());
  const long write_us = long(std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - t0).count());
  fs::remove(dir->path() / "timing.h5");
  std::printf("  one write of the new record: %.1f ms\n", double(write_us) / 1000.0);
  ASSERT_TRUE(write_store(p, old_record).has_value());

  // Fixed delays, then 5%, 15%, .. 115% of a write; -1: the child runs to the
  // end (the new store must then be in place).
  std::vector<long> delays_us = {0, 1000, 5000, 20000, 50000};
  for (int pct = 5; pct <= 115; pct += 10) delays_us.push_back(write_us * pct / 100);
  delays_us.push_back(-1);
  std::map<std::string, int> outcomes;
  for (long delay_us : delays_us) {
    SCOPED_TRACE("killed after " + std::to_string(delay_us) + " us");
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      auto w = write_store(p, new_record);
      ::_exit(w ? 0 : 1);
    }
    if (delay_us >= 0) {
      std::this_thread::sleep_for(std::chrono::microseconds(delay_us));
      ::kill(pid, SIGKILL);
    }
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    if (delay_us < 0) {
      ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "the writer failed";
    }

    auto back = read_store(p);
    ASSERT_TRUE(back.has_value()) << "the store is unreadable after the kill: " << back.error().message;
    const bool is_new = back->config_hash == "new";
    ASSERT_TRUE(is_new || back->config_hash == "old") << back->config_hash;
    EXPECT_EQ(diff_record(is_new ? new_record : old_record, *back), "");
    if (delay_us < 0) {
      EXPECT_TRUE(is_new);
    }
    const bool killed = delay_us >= 0 && WIFSIGNALED(status);
    ++outcomes[std::string(killed ? "killed" : "finished") + (is_new ? ", new store" : ", old store")];

    // Only the killed writer's own temporary file may remain, never at `p`.
    const std::string tmp = p.filename().string() + ".tmp-" + std::to_string(pid);
    for (const auto& e : fs::directory_iterator(dir->path())) {
      const std::string name = e.path().filename().string();
      EXPECT_TRUE(name == p.filename().string() || (killed && name == tmp)) << "unexpected file " << name;
    }
    std::error_code ec;
    fs::remove(dir->path() / tmp, ec);
    if (is_new) {
      ASSERT_TRUE(write_store(p, old_record).has_value());
    }
  }
  for (const auto& [what, count] : outcomes) std::printf("  %-24s %d\n", what.c_str(), count);
  EXPECT_GE(outcomes["killed, old store"], 1) << "no kill landed before the rename: the test proves nothing";
}

}  // namespace
}  // namespace kevolve::store
