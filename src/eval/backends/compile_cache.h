// The one compile-and-cache path every compiler (g++, nvcc, hipcc) goes
// through. The content hash of (source, flags, toolchain) names a cache
// entry; a hit returns the cached library without running the compiler; a
// miss compiles in a scratch directory of its own under a time limit and
// installs the results atomically (a temporary name, then a rename), the
// record <hash>.json last, so a killed or failed compile leaves nothing in
// the cache. What differs between compilers is a compile_recipe: the argv,
// the outputs kept and how the resource report is read.
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "common/error.h"
#include "eval/backends/backend.h"

namespace kevolve::eval {

// The files of one compile, in its scratch directory.
struct compile_scratch {
  std::filesystem::path dir;
  std::filesystem::path source;   // the candidate, named recipe.source_file
  std::filesystem::path output;   // kernel.so
  std::filesystem::path exports;  // exports.map: a version script leaving only kevolve_kernel visible
};

struct compile_recipe {
  std::string compiler;  // argv[0], named in errors
  // The cache key is the content hash of (source, the flags joined, toolchain, key_extra...).
  std::vector<std::string> flags;
  std::string toolchain;  // compiler, version and target ("g++ 12.2.0 | <cpu> | abi <hash>")
  std::vector<std::string> key_extra;
  // argv: compiler, `leading`, the flags but the -l ones, scratch_args(scratch),
  // source, -o, output, the -l flags.
  std::vector<std::string> leading;
  std::function<std::vector<std::string>(const compile_scratch&)> scratch_args;
  std::string scratch_prefix = "kevolve-compile-";
  std::string source_file = "kernel.cpp";
  size_t max_output_bytes = 64 * 1024;
  // Outputs kept beside <hash>.so, as (scratch file, cache suffix): {"kernel.ptx", ".ptx"}.
  // A run that does not leave them did not compile.
  std::vector<std::pair<std::string, std::string>> artefacts;
  std::string target;  // report.target: "sm_90", "gfx90a,gfx940"; "" on the CPU
  // The resource report in the diagnostics (registers, LDS, spills): read after
  // every run and on every cache hit.
  std::function<void(compile_report&)> parse_diagnostics;
  // After a successful run: reports the compiler wrote beside the output.
  std::function<void(const compile_scratch&, compile_report&)> read_outputs;
  // Why the kernel fails for the resources it uses, whether or not the
  // compiler accepted it (hip: LDS over the limit, VGPR spills); "" if not.
  std::function<std::string(const compile_report&)> refuse;

  std::vector<std::string> argv(const compile_scratch& s) const;
};

// The reason a compile killed at its time limit fails, on every backend.
std::string compile_timeout_reason(std::chrono::seconds limit);

class compile_cache {
 public:
  // `dir` holds each entry's <hash>.so, its artefacts and <hash>.json;
  // `timeout` bounds one compile.
  compile_cache(std::filesystem::path dir, std::chrono::seconds timeout);

  // The entry `source` compiles to under `recipe`.
  static std::string key(const std::string& source, const compile_recipe& recipe);

  // Fails (error) only when the compiler cannot be run at all or the cache
  // cannot be written; a source that does not compile, or takes longer than
  // the time limit, is a compiled_kernel with ok == false (`failure` says why
  // when it is not the compiler rejecting the source). `display_name`
  // replaces the scratch path in diagnostics.
  expected<compiled_kernel> compile(const std::string& source, const compile_recipe& recipe,
                                    const std::string& display_name) const;

  const std::filesystem::path& dir() const { return dir_; }
  std::chrono::seconds timeout() const { return timeout_; }

 private:
  bool lookup(const compile_recipe& recipe, compiled_kernel& k) const;
  std::filesystem::path entry(const std::string& hash, const std::string& suffix) const {
    return dir_ / (hash + suffix);
  }

  std::filesystem::path dir_;
  std::chrono::seconds timeout_;
};

}  // namespace kevolve::eval
