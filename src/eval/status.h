// Verdict status: data, never an exception (ARCHITECTURE.md). Header-only so
// that the search engine and the store share it without the evaluator.
#pragma once

#include <string>

namespace kevolve::eval {

// compile_only: compiled and checked for a device this node does not have
// (the hip backend without an AMD GPU); never run, never timed, fitness 0,
// never a speedup. Last, so that stores written before it decode unchanged.
enum class status { ok, compile_failed, wrong_result, runtime_failed, timeout, crashed, suspicious, skipped, compile_only };
constexpr status kLastStatus = status::compile_only;

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
    case status::compile_only: return "compile_only";
  }
  return "?";
}

inline bool parse_status(const std::string& text, status& out) {
  for (status s : {status::ok, status::compile_failed, status::wrong_result, status::runtime_failed, status::timeout,
                   status::crashed, status::suspicious, status::skipped, status::compile_only})
    if (text == to_string(s)) {
      out = s;
      return true;
    }
  return false;
}

}  // namespace kevolve::eval
