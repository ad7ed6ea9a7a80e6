// The cpu backend: compiles C++ kernels with g++ into shared objects, with a
// content-addressed cache, and checks what the result may do.
#pragma once

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "common/error.h"
#include "eval/elf_inspect.h"
#include "eval/verdict.h"

namespace kevolve::eval {

struct compiled_kernel {
  bool ok = false;
  std::filesystem::path library;  // valid when ok
  std::string hash;               // cache key
  compile_report report;
};

class cpu_compiler {
 public:
  // `cache_dir` holds <hash>.so and <hash>.json; `timeout` bounds one compile.
  cpu_compiler(std::filesystem::path cache_dir, std::chrono::seconds timeout);

  // Compiles `source`; `libraries` are names from spec::known_libraries().
  // Fails (error) only when the compiler cannot be run at all; a source that
  // does not compile is a compiled_kernel with ok == false.
  // `display_name` replaces the scratch path in diagnostics.
  expected<compiled_kernel> compile(const std::string& source, const std::vector<std::string>& libraries,
                                    const std::string& display_name = "kernel.cpp");

  // "g++ 12.2.0 -O3 -march=native (AMD EPYC ...)", part of every cache key.
  const std::string& toolchain_id();
  std::vector<std::string> flags(const std::vector<std::string>& libraries) const;

 private:
  std::filesystem::path cache_dir_;
  std::chrono::seconds timeout_;
  std::string toolchain_id_;
  std::string compiler_;
};

// Checks a compiled candidate against the ABI: exactly one export, no
// forbidden imports, no mutable static data, no load-time code. Returns the
// problems ("" when none) and which verdict they mean.
struct abi_check {
  status result = status::ok;
  std::string reason;
};
abi_check check_candidate_library(const elf_report& elf);

// The compiler's vectorization report lines ("loop vectorized").
int count_vectorized_loops(const std::string& opt_info);

}  // namespace kevolve::eval
