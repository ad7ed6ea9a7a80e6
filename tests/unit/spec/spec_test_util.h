// Paths for the spec tests: the checked-in test data and the real catalog.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <string>

#include "common/paths.h"

namespace kevolve::spec::testing {

// $KEVOLVE_TEST_DATA (set by CTest), else tests/data of the source tree.
inline std::filesystem::path test_data() {
  const char* d = std::getenv("KEVOLVE_TEST_DATA");
  if (d && *d) return d;
  return data_root() / "tests" / "data";
}

inline std::filesystem::path catalog_dir() { return data_root() / "config" / "operators"; }

}  // namespace kevolve::spec::testing
