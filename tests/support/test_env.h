// Shared helpers for tests: paths from the environment CTest sets, fast
// evaluator options, and the machine's (cached) hardware profile.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "common/fs.h"
#include "eval/backends/cpu_probe.h"
#include "eval/evaluator.h"
#include "spec/operator_loader.h"

namespace kevolve::testing {

inline std::filesystem::path test_data() {
  const char* d = std::getenv("KEVOLVE_TEST_DATA");
  return d ? d : "tests/data";
}

inline std::string kernel_source(const std::string& relative) {
  auto text = read_file(test_data() / "kernels" / relative);
  EXPECT_TRUE(text.has_value()) << (text ? "" : text.error().message);
  return text ? *text : std::string();
}

inline spec::operator_spec test_operator(const std::string& name) {
  auto op = spec::load_operator(test_data() / "operators" / (name + ".yaml"));
  EXPECT_TRUE(op.has_value()) << (op ? "" : op.error().message);
  return op ? *op : spec::operator_spec{};
}

// Small budgets: trust tests check verdicts, not speed.
inline eval::evaluator_options fast_options() {
  eval::evaluator_options o;
  o.threads = 2;
  o.rotation_bytes = 8.0 * (1 << 20);
  o.max_sets = 8;
  o.time_budget_seconds = 0.05;
  o.min_runs = 6;
  o.call_timeout = std::chrono::milliseconds(1500);
  o.memory_limit_bytes = uint64_t(512) << 20;
  o.ncu = false;  // the profiling pass has its own test (cuda_ncu_test.cpp)
  // PyTorch (on by default on cpu and cuda) has its own tests
  // (torch_baseline_test.cpp, torch_reference_test.cpp): here, fitness over
  // the baseline.
  o.torch_baselines = false;
  return o;
}

inline spec::hardware_profile machine_profile() {
  auto hw = eval::cpu_hardware_profile(2, false);
  EXPECT_TRUE(hw.has_value()) << (hw ? "" : hw.error().message);
  return hw ? *hw : spec::hardware_profile{};
}

}  // namespace kevolve::testing
