// Operational errors: an enum plus a message with context, carried by
// tl::expected. Candidate failures are verdicts (eval/verdict.h), never errors.
#pragma once

#include <string>

#include <tl/expected.hpp>

namespace kevolve {

enum class errc {
  invalid_input = 1,  // bad YAML, bad option, bad kernel file path
  not_found,          // missing file or entry
  io_error,           // read/write/rename failed
  toolchain_error,    // a compiler or tool could not be run
  subprocess_error,   // fork/exec/pipe failures
  internal,           // a broken invariant that is not a bug in the caller
};

const char* to_string(errc code);

struct error {
  errc code = errc::internal;
  std::string message;  // lowercase, names the context: "file:line: 'key' ..."
};

template <class T>
using expected = tl::expected<T, error>;

inline tl::unexpected<error> make_error(errc code, std::string message) {
  return tl::unexpected<error>(error{code, std::move(message)});
}

// Exit codes of the kevolve binary (documented in README.md).
enum exit_code : int {
  exit_ok = 0,
  exit_verdict_not_ok = 1,
  exit_bad_input = 2,
  exit_internal = 3,
};

int exit_code_for(const error& e);

}  // namespace kevolve
