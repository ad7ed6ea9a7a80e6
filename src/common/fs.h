// Small filesystem helpers: whole-file I/O, atomic replace, temporary dirs.
#pragma once

#include <filesystem>
#include <string>

#include "common/error.h"

namespace kevolve {

expected<std::string> read_file(const std::filesystem::path& path);

// Writes to a sibling temporary file, fsyncs it, renames it over `path` and
// fsyncs the directory: readers see the old or the new file, never a torn one.
expected<void> write_file_atomic(const std::filesystem::path& path, const std::string& content);

// Copies `from` over `to` the same way: a reader of `to` (another evaluator
// sharing a compile cache) never sees a half-copied file.
expected<void> install_file_atomic(const std::filesystem::path& from, const std::filesystem::path& to);

// A directory created with mkdtemp and removed (recursively) on destruction.
class temp_dir {
 public:
  // In `root`, else in this process's scratch root (common/scratch.h).
  static expected<temp_dir> create(const std::string& prefix, const std::filesystem::path& root = {});
  temp_dir(temp_dir&& other) noexcept;
  temp_dir& operator=(temp_dir&& other) noexcept;
  temp_dir(const temp_dir&) = delete;
  temp_dir& operator=(const temp_dir&) = delete;
  ~temp_dir();

  const std::filesystem::path& path() const { return path_; }

 private:
  explicit temp_dir(std::filesystem::path p) : path_(std::move(p)) {}
  std::filesystem::path path_;
};

}  // namespace kevolve
