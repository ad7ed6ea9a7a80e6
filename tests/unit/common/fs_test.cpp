// Files the user keeps (profiles, caches, results) are written with
// write_file_atomic: a reader sees the old or the new content, never a torn
// one, and no temporary file is left behind.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <string>
#include <thread>

#include "common/fs.h"

namespace kevolve {
namespace {
namespace fs = std::filesystem;

std::set<std::string> entries(const fs::path& dir) {
  std::set<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) out.insert(e.path().filename().string());
  return out;
}

temp_dir make_temp() {
  auto t = temp_dir::create("kevolve-fs-test-");
  if (!t) {
    ADD_FAILURE() << t.error().message;
    std::abort();
  }
  return std::move(*t);
}

TEST(write_file_atomic, creates_a_file_with_exactly_the_content) {
  temp_dir t = make_temp();
  const fs::path f = t.path() / "profile.yaml";
  const std::string content = std::string("name: x\n") + std::string(1, '\0') + "tail\n";
  ASSERT_TRUE(write_file_atomic(f, content).has_value());
  auto back = read_file(f);
  ASSERT_TRUE(back.has_value()) << back.error().message;
  EXPECT_EQ(*back, content);
  EXPECT_EQ(entries(t.path()), (std::set<std::string>{"profile.yaml"}));
  struct stat st {};
  ASSERT_EQ(::stat(f.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0644u);
}

TEST(write_file_atomic, replaces_longer_content_without_a_stale_tail) {
  temp_dir t = make_temp();
  const fs::path f = t.path() / "result.json";
  ASSERT_TRUE(write_file_atomic(f, std::string(100000, 'o')).has_value());
  ASSERT_TRUE(write_file_atomic(f, "new\n").has_value());
  auto back = read_file(f);
  ASSERT_TRUE(back.has_value()) << back.error().message;
  EXPECT_EQ(*back, "new\n");
  EXPECT_EQ(entries(t.path()), (std::set<std::string>{"result.json"}));
}

TEST(write_file_atomic, a_reader_of_the_old_file_keeps_seeing_the_old_content) {
  // Replacement by rename: a file opened before the write is not modified in
  // place, so a concurrent reader never sees a mix of old and new bytes.
  temp_dir t = make_temp();
  const fs::path f = t.path() / "cache.json";
  const std::string old_content(64 * 1024, 'a');
  ASSERT_TRUE(write_file_atomic(f, old_content).has_value());
  std::ifstream reader(f, std::ios::binary);
  ASSERT_TRUE(reader.good());
  ASSERT_TRUE(write_file_atomic(f, std::string(64 * 1024, 'b')).has_value());
  const std::string seen((std::istreambuf_iterator<char>(reader)), std::istreambuf_iterator<char>());
  EXPECT_EQ(seen, old_content);
  auto now = read_file(f);
  ASSERT_TRUE(now.has_value());
  EXPECT_EQ(*now, std::string(64 * 1024, 'b'));
}

TEST(write_file_atomic, many_replacements_leave_no_temporary_files) {
  temp_dir t = make_temp();
  for (int i = 0; i < 50; ++i)
    ASSERT_TRUE(write_file_atomic(t.path() / "a.txt", "v" + std::to_string(i)).has_value());
  ASSERT_TRUE(write_file_atomic(t.path() / "b.txt", "b").has_value());
  EXPECT_EQ(entries(t.path()), (std::set<std::string>{"a.txt", "b.txt"}));
  EXPECT_EQ(*read_file(t.path() / "a.txt"), "v49");
}

TEST(write_file_atomic, creates_missing_parent_directories) {
  temp_dir t = make_temp();
  const fs::path f = t.path() / "x" / "y" / "z.txt";
  ASSERT_TRUE(write_file_atomic(f, "deep").has_value());
  EXPECT_EQ(*read_file(f), "deep");
  EXPECT_EQ(entries(t.path() / "x" / "y"), (std::set<std::string>{"z.txt"}));
}

TEST(write_file_atomic, fails_with_io_error_naming_the_path_when_it_cannot_write) {
  temp_dir t = make_temp();
  // The parent "directory" is a regular file: nothing can be created there
  // (this holds for root too, unlike permission bits).
  ASSERT_TRUE(write_file_atomic(t.path() / "plain", "x").has_value());
  const fs::path f = t.path() / "plain" / "out.txt";
  auto r = write_file_atomic(f, "data");
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, errc::io_error);
  EXPECT_NE(r.error().message.find(f.string()), std::string::npos) << r.error().message;
  EXPECT_EQ(entries(t.path()), (std::set<std::string>{"plain"}));
  EXPECT_EQ(*read_file(t.path() / "plain"), "x");
}

TEST(read_file, missing_file_is_not_found_naming_the_path) {
  temp_dir t = make_temp();
  const fs::path f = t.path() / "no_such_file.yaml";
  auto r = read_file(f);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, errc::not_found);
  EXPECT_NE(r.error().message.find(f.string()), std::string::npos) << r.error().message;
}

TEST(read_file, a_directory_is_an_error_not_an_empty_file) {
  // `kevolve eval --kernel some_dir/` must be a usage error, not an empty
  // kernel that then "fails to compile".
  temp_dir t = make_temp();
  auto r = read_file(t.path());
  ASSERT_FALSE(r.has_value()) << "read_file of a directory returned " << r->size() << " bytes";
  EXPECT_NE(r.error().message.find(t.path().string()), std::string::npos) << r.error().message;
}

TEST(read_file, reads_binary_content_unchanged) {
  temp_dir t = make_temp();
  std::string bytes;
  for (int i = 0; i < 256; ++i) bytes.push_back(static_cast<char>(i));
  bytes += "\r\n\n";
  {
    std::ofstream out(t.path() / "bin", std::ios::binary);
    out << bytes;
  }
  auto r = read_file(t.path() / "bin");
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_EQ(*r, bytes);
}

TEST(temp_dir, is_a_fresh_directory_removed_with_its_content_on_destruction) {
  fs::path p;
  {
    temp_dir t = make_temp();
    p = t.path();
    ASSERT_TRUE(fs::is_directory(p));
    EXPECT_EQ(p.filename().string().rfind("kevolve-fs-test-", 0), 0u) << p;
    EXPECT_TRUE(fs::is_empty(p));
    fs::create_directories(p / "sub" / "deeper");
    std::ofstream(p / "sub" / "deeper" / "f.o") << "object";
  }
  EXPECT_FALSE(fs::exists(p)) << p << " outlived its temp_dir";
}

TEST(temp_dir, two_directories_are_distinct) {
  temp_dir a = make_temp();
  temp_dir b = make_temp();
  EXPECT_NE(a.path(), b.path());
}

TEST(temp_dir, moving_transfers_ownership_without_early_removal) {
  fs::path p;
  {
    temp_dir outer = make_temp();
    {
      temp_dir inner = make_temp();
      p = inner.path();
      outer = std::move(inner);  // outer's own directory goes now
    }
    EXPECT_TRUE(fs::is_directory(p)) << "removed by the moved-from temp_dir";
    EXPECT_EQ(outer.path(), p);
    temp_dir moved(std::move(outer));
    EXPECT_EQ(moved.path(), p);
    EXPECT_TRUE(fs::is_directory(p));
  }
  EXPECT_FALSE(fs::exists(p));
}

TEST(temp_dir, move_assignment_removes_the_directory_it_replaces) {
  temp_dir a = make_temp();
  const fs::path old = a.path();
  a = make_temp();
  EXPECT_FALSE(fs::exists(old));
  EXPECT_TRUE(fs::is_directory(a.path()));
}

TEST(temp_dir, honours_tmpdir) {
  temp_dir base = make_temp();
  const char* saved = std::getenv("TMPDIR");
  const std::string saved_value = saved ? saved : "";
  ::setenv("TMPDIR", base.path().c_str(), 1);
  fs::path p;
  {
    auto t = temp_dir::create("inner-");
    if (saved) ::setenv("TMPDIR", saved_value.c_str(), 1);
    else ::unsetenv("TMPDIR");
    ASSERT_TRUE(t.has_value()) << t.error().message;
    p = t->path();
    EXPECT_EQ(p.parent_path().parent_path(), base.path());  // in this process's scratch root there
  }
  EXPECT_FALSE(fs::exists(p));
  EXPECT_EQ(entries(base.path()).size(), 1u);
  EXPECT_TRUE(fs::is_empty(p.parent_path()));
}

// Two evaluators sharing a compile cache may finish the same kernel at once:
// one installs its library while the other is already loading it.
TEST(install_file_atomic, a_concurrent_reader_never_sees_a_partial_library) {
  temp_dir t = make_temp();
  const fs::path a = t.path() / "a.bin", b = t.path() / "b.bin", so = t.path() / "cached.so";
  const std::string big_a(4 << 20, 'a'), big_b(4 << 20, 'b');
  ASSERT_TRUE(write_file_atomic(a, big_a).has_value());
  ASSERT_TRUE(write_file_atomic(b, big_b).has_value());
  ASSERT_TRUE(install_file_atomic(a, so).has_value());
  std::thread writer([&] {
    for (int i = 0; i < 40; ++i) ASSERT_TRUE(install_file_atomic(i % 2 ? a : b, so).has_value());
  });
  int torn = 0;
  for (int i = 0; i < 200; ++i) {
    auto got = read_file(so);
    ASSERT_TRUE(got.has_value()) << got.error().message;
    if (*got != big_a && *got != big_b) ++torn;
  }
  writer.join();
  EXPECT_EQ(torn, 0) << "a reader saw a library of neither version";
  EXPECT_EQ(entries(t.path()), (std::set<std::string>{"a.bin", "b.bin", "cached.so"}));
}

TEST(install_file_atomic, a_missing_source_is_an_error_naming_it) {
  temp_dir t = make_temp();
  auto r = install_file_atomic(t.path() / "gone.so", t.path() / "cached.so");
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.error().message.find("gone.so"), std::string::npos) << r.error().message;
  EXPECT_FALSE(fs::exists(t.path() / "cached.so"));
}

}  // namespace
}  // namespace kevolve
