// The cpu backend: compiles C++ kernels with g++ into shared objects, with a
// content-addressed cache, and checks what the result may do.
#pragma once

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "common/error.h"
#include "eval/backends/backend.h"
#include "eval/backends/compile_cache.h"
#include "eval/elf_inspect.h"
#include "eval/verdict.h"

namespace kevolve::eval {

class cpu_compiler {
 public:
  // `cache_dir` holds <hash>.so and <hash>.json; `timeout` bounds one compile.
  // `extra_flags` follow the usual ones (the mtia_emu backend adds its
  // include path and drops nothing); `id_tag` is appended to the toolchain id.
  cpu_compiler(std::filesystem::path cache_dir, std::chrono::seconds timeout, std::vector<std::string> extra_flags = {},
               std::string id_tag = {});

  // Compiles `source`; `libraries` are names from the backend's linkable_libraries (registry.h).
  // Fails (error) only when the compiler cannot be run at all; a source that
  // does not compile is a compiled_kernel with ok == false.
  // `display_name` replaces the scratch path in diagnostics.
  expected<compiled_kernel> compile(const std::string& source, const std::vector<std::string>& libraries,
                                    const std::string& display_name = "kernel.cpp");

  // "g++ 12.2.0 -O3 -march=native (AMD EPYC ...)", part of every cache key.
  const std::string& toolchain_id();
  std::vector<std::string> flags(const std::vector<std::string>& libraries) const;

 private:
  compile_cache cache_;
  std::string toolchain_id_;
  std::string compiler_;
  std::vector<std::string> extra_flags_;
  std::string id_tag_;
};

// Checks a compiled candidate against the ABI: exactly one export, no
// forbidden imports, no mutable static data, no load-time code. Returns the
// problems ("" when none) and which verdict they mean.
abi_check check_candidate_library(const elf_report& elf);

// The cpu backend: g++, kevolve-worker, steady-clock timing.
class cpu_backend : public backend {
 public:
  cpu_backend(std::filesystem::path cache_dir, std::chrono::seconds timeout) : compiler_(std::move(cache_dir), timeout) {}
  const char* name() const override { return "cpu"; }
  expected<compiled_kernel> compile(const std::string& source, const std::vector<std::string>& libraries,
                                    const std::string& display_name) override {
    return compiler_.compile(source, libraries, display_name);
  }
  const std::string& toolchain_id() override { return compiler_.toolchain_id(); }
  std::vector<policy_violation> scan(const std::string& source, const std::vector<std::string>& allowed) const override {
    return scan_source(source, allowed);
  }
  expected<abi_check> check_compiled(const compiled_kernel& k, const std::vector<std::string>& allowed) const override;
  worker_options worker(int threads, bool sandbox, uint64_t address_space_bytes) const override;
  const char* timer() const override { return "steady_clock in the worker"; }

 private:
  cpu_compiler compiler_;
};

// The compiler's vectorization report lines ("loop vectorized").
int count_vectorized_loops(const std::string& opt_info);

}  // namespace kevolve::eval
