// main() of every GoogleTest binary: points kevolve at this source tree, the
// freshly built worker and a cache inside the build directory, so tests run
// the same from CTest and by hand, and never touch the user's cache.
#include <cstdlib>

#include <gtest/gtest.h>

int main(int argc, char** argv) {
  ::setenv("KEVOLVE_HOME", KEVOLVE_TEST_SOURCE_DIR, 0);
  ::setenv("KEVOLVE_CACHE_DIR", KEVOLVE_TEST_BINARY_DIR "/test-cache", 0);
  ::setenv("KEVOLVE_WORKER", KEVOLVE_TEST_BINARY_DIR "/kevolve-worker", 0);
  ::setenv("KEVOLVE_BIN", KEVOLVE_TEST_BINARY_DIR "/kevolve", 0);
  ::setenv("KEVOLVE_TEST_DATA", KEVOLVE_TEST_SOURCE_DIR "/tests/data", 0);
  // PyTorch: the project virtualenv under KEVOLVE_HOME (python_executable()).
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
