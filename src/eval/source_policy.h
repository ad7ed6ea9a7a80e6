// Static scan of a candidate's source for what a kernel may not do: call a
// vendor library the operator does not allow, load code at run time, use
// inline assembly or raw system calls, spawn processes, touch signals,
// memory protection or clocks, or run code at load time.
#pragma once

#include <string>
#include <vector>

namespace kevolve::eval {

struct policy_violation {
  int line = 0;
  std::string rule;  // short name, e.g. "vendor library"
  std::string text;  // the offending token
};

std::vector<policy_violation> scan_source(const std::string& source, const std::vector<std::string>& allowed_libraries);

// Replaces comments and string/char literals by spaces, keeping newlines and
// #include lines, so that line numbers still match.
std::string strip_comments_and_strings(const std::string& source);

// "line 12: vendor library (cblas_sgemm); line 30: ..."
std::string describe(const std::vector<policy_violation>& v);

}  // namespace kevolve::eval
