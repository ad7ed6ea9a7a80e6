// Verdict status: data, never an exception (ARCHITECTURE.md). Header-only so
// that the search engine and the store share it without the evaluator.
#pragma once

#include <string>

namespace kevolve::eval {

enum class status { ok, compile_failed, wrong_result, runtime_failed, timeout, crashed, suspicious, skipped };

inline const char* to_string(status s) {
  switch (s) {
    case status::ok: return "ok";
    case status::compile_failed: return "compile_failed";
    case status::wrong_result: return "wrong_result";
    case status::runtime_failed: return "runtime_failed";
    case status::timeout: return "timeout";
    case status::crashed: return "crashed";
    case status::suspicious: return "suspicious";
    case status::skipped: return "skipped";
  }
  return "?";
}

inline bool parse_status(const std::string& text, status& out) {
  for (status s : {status::ok, status::compile_failed, status::wrong_result, status::runtime_failed, status::timeout,
                   status::crashed, status::suspicious, status::skipped})
    if (text == to_string(s)) {
      out = s;
      return true;
    }
  return false;
}

}  // namespace kevolve::eval
