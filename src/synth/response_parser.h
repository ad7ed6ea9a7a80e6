// What an LLM reply is worth before an evaluation is spent on it: the kernel
// (a fenced code block, or a unified diff against the parent applied here),
// checked for the ABI symbol; else why the reply is unusable.
#pragma once

#include <string>

namespace kevolve::synth {

struct extracted_kernel {
  bool ok = false;
  std::string code;
  std::string how;       // "fenced" | "diff"
  std::string summary;   // the reply's first line of prose, at most 200 characters
  std::string unusable;  // when !ok: why, one line
};

// `parent_code` may be empty (then a diff cannot apply).
extracted_kernel extract_kernel(const std::string& reply, const std::string& parent_code, const std::string& backend);

// "" when `code` defines extern "C" kevolve_kernel, else what is missing.
std::string check_abi_symbol(const std::string& code, const std::string& backend);

// Applies a unified diff to `original`; "" in `error` on success.
std::string apply_unified_diff(const std::string& original, const std::string& diff, std::string& error);

}  // namespace kevolve::synth
