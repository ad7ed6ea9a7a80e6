// The backend registry: every component asks it, none compares backend
// names; a backend added at run time is evaluated end to end like a
// built-in one.
#include <filesystem>
#include <fstream>
#include <regex>

#include <gtest/gtest.h>

#include "common/fs.h"
#include "common/paths.h"
#include "cpu_o1_backend.h"
#include "eval/backends/backend.h"
#include "eval/backends/registry.h"
#include "support/test_env.h"

namespace kevolve::eval {
namespace {

namespace fs = std::filesystem;

TEST(BackendRegistry, KnowsTheBuiltInBackendsAndNamesThemInErrors) {
  for (const char* name : {"cpu", "cuda", "hip", "hip_on_cuda", "mtia_emu"}) EXPECT_NE(find_backend(name), nullptr) << name;
  EXPECT_TRUE(host_backend().traits.host);
  auto unknown = require_backend("tpu");
  ASSERT_FALSE(unknown.has_value());
  EXPECT_NE(unknown.error().message.find("backend 'tpu' is not known (backends: cpu, cuda, hip, hip_on_cuda, mtia_emu"),
            std::string::npos)
      << unknown.error().message;
  // Only the backends a sweep may list.
  EXPECT_EQ(backend_names([](const auto& d) { return d.traits.sweepable; }), "cpu, cuda, hip, mtia_emu");
}

TEST(BackendRegistry, RefusesATakenNameAndABackendWithoutBehaviour) {
  backend_descriptor again = testing::cpu_o1_descriptor();
  again.name = "cuda";
  auto taken = register_backend(again);
  ASSERT_FALSE(taken.has_value());
  EXPECT_NE(taken.error().message.find("'cuda' is registered already"), std::string::npos);
  backend_descriptor bare;
  bare.name = "bare";
  auto none = register_backend(bare);
  ASSERT_FALSE(none.has_value());
  EXPECT_NE(none.error().message.find("brings no hooks.make"), std::string::npos);
  EXPECT_EQ(find_backend("bare"), nullptr);
}

// One file pair (cpu_o1_backend.{h,cpp}) and one registry row (the call
// below): the evaluator, the hardware profile and the verdict need nothing else.
TEST(BackendRegistry, ABackendAddedAtRunTimeEvaluatesAKernelEndToEnd) {
  if (!find_backend("cpu_o1")) {
    ASSERT_TRUE(register_backend(testing::cpu_o1_descriptor()).has_value());
  }
  const backend_descriptor* d = find_backend("cpu_o1");
  ASSERT_NE(d, nullptr);
  auto hw = backend_hardware(*d, 2);
  ASSERT_TRUE(hw.has_value()) << hw.error().message;
  EXPECT_EQ(hw->backend, "cpu_o1");
  ASSERT_TRUE(backend_usable(*d).has_value());

  const spec::operator_spec op = testing::test_operator("t_softmax");
  auto ev = evaluator::create(op, "fp32", testing::fast_options(), *hw);
  ASSERT_TRUE(ev.has_value()) << ev.error().message;
  auto v = (*ev)->evaluate(testing::kernel_source("softmax_good.cpp"));
  ASSERT_TRUE(v.has_value()) << v.error().message;
  EXPECT_EQ(v->backend, "cpu_o1");
  EXPECT_EQ(v->result, status::ok) << v->reason;
  EXPECT_GT(v->fitness, 0.0);
  // Compiled by its own recipe, into its own cache.
  auto be = make_backend("cpu_o1", std::chrono::seconds(60));
  ASSERT_TRUE(be.has_value());
  EXPECT_NE((*be)->toolchain_id().find("cpu_o1"), std::string::npos) << (*be)->toolchain_id();
  EXPECT_TRUE(fs::is_directory(cache_root() / "compile" / "cpu_o1"));

  // A cheating kernel is refused on it as on cpu: the verdict's checks are the evaluator's.
  auto constant = (*ev)->evaluate(testing::kernel_source("cheats/r04_constant.cpp"));
  ASSERT_TRUE(constant.has_value()) << constant.error().message;
  EXPECT_EQ(constant->result, status::wrong_result) << constant->reason;
}

// What the registry is for: outside src/eval/backends/, no code compares a
// backend name with a string literal (`backend == "cuda"`); it asks the
// registry. Names come from the registry, so a new backend is covered too.
TEST(BackendRegistry, NoComponentComparesABackendNameWithALiteral) {
  std::string names;
  for (const auto* d : registered_backends()) names += (names.empty() ? "" : "|") + d->name;
  const std::string lit = "\"(" + names + ")\"";
  const std::regex comparison("(==|!=)\\s*" + lit + "|" + lit + "\\s*(==|!=)|compare\\(\\s*" + lit + "\\s*\\)");
  const fs::path root = KEVOLVE_TEST_SOURCE_DIR;
  const fs::path registry_dir = root / "src" / "eval" / "backends";
  std::vector<std::string> found;
  size_t scanned = 0;
  for (const char* top : {"src", "actors"})
    for (const auto& e : fs::recursive_directory_iterator(root / top)) {
      const std::string ext = e.path().extension().string();
      if (!e.is_regular_file() || (ext != ".cpp" && ext != ".h" && ext != ".cu" && ext != ".hip")) continue;
      if (e.path().parent_path() == registry_dir) continue;
      std::ifstream in(e.path());
      std::string line;
      for (int n = 1; std::getline(in, line); ++n)
        if (std::regex_search(line, comparison))
          found.push_back(fs::relative(e.path(), root).string() + ":" + std::to_string(n) + ": " + line);
      ++scanned;
    }
  EXPECT_GT(scanned, 100u);  // the tree was found
  std::string all;
  for (const auto& f : found) all += f + "\n";
  EXPECT_TRUE(found.empty()) << "ask the backend registry (src/eval/backends/registry.h) instead of comparing names:\n"
                             << all;
}

}  // namespace
}  // namespace kevolve::eval
