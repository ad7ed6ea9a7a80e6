#include "common/error.h"

namespace kevolve {

const char* to_string(errc code) {
  switch (code) {
    case errc::invalid_input: return "invalid input";
    case errc::not_found: return "not found";
    case errc::io_error: return "i/o error";
    case errc::toolchain_error: return "toolchain error";
    case errc::subprocess_error: return "subprocess error";
    case errc::internal: return "internal error";
  }
  return "unknown error";
}

int exit_code_for(const error& e) {
  switch (e.code) {
    case errc::invalid_input:
    case errc::not_found: return exit_bad_input;
    default: return exit_internal;
  }
}

}  // namespace kevolve
