// Pieces the GPU backends (cuda, hip) share: finding a compiler, the cached
// compile record, the source rules runner and the launch-stream check. Each
// backend keeps only what differs: its compiler flags, its resource report,
// its rules and its runtime allow-list.
#pragma once

#include <filesystem>
#include <regex>
#include <string>
#include <vector>

#include "common/error.h"
#include "eval/backends/backend.h"
#include "eval/source_policy.h"

namespace kevolve::eval::gpu {

std::string trim(std::string s);

// $ENV_VAR, else `name` on PATH, else `fallback`.
std::string find_tool(const char* env_var, const char* name, const std::string& fallback);

// A source rule: `library` non-null means allowed when the operator allows it.
struct source_rule {
  const char* name;
  std::regex re;
  const char* library;
};
// Appends a violation per match of every rule (comments and strings stripped).
void apply_rules(const std::string& code, const std::vector<source_rule>& rules, const std::vector<std::string>& allowed,
                 std::vector<policy_violation>& out);

// `kernel<<<grid, block, smem, stream>>>` launches with fewer than four
// configuration arguments, or a null stream, run on the default stream.
void scan_chevron_launches(const std::string& code, std::vector<policy_violation>& out);
// `hipLaunchKernelGGL(kernel, grid, block, smem, stream, ...)` with a null stream.
void scan_call_launches(const std::string& code, const std::string& function, int stream_arg,
                        std::vector<policy_violation>& out);

// The compile cache's record beside a kernel's artefacts (<hash>.json).
// Fills ok, seconds, diagnostics, code_bytes and cached; false when missing or damaged.
bool load_compile_record(const std::filesystem::path& meta, compiled_kernel& k);
expected<void> save_compile_record(const std::filesystem::path& meta, const compiled_kernel& k);

// Replaces every occurrence of a temporary path in compiler output.
std::string replace_all(std::string text, const std::string& from, const std::string& to);

}  // namespace kevolve::eval::gpu
