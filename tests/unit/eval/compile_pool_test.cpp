// The compile-ahead pool (eval/compile_pool.h): a candidate it compiled is a
// cache hit when the evaluator's own static checks run, and settle() returns
// only once the pool's compile of that source is done.
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "common/fs.h"
#include "common/paths.h"
#include "eval/backends/backend.h"
#include "eval/compile_pool.h"

namespace kevolve::eval {
namespace {

std::string unique_source() {
  auto text = read_file(data_root() / "knowledge" / "examples" / "cpu" / "softmax.cpp");
  EXPECT_TRUE(text.has_value());
  // A source no earlier run compiled: the cache cannot already hold it.
  return *text + "\n// compile_pool_test " + std::to_string(::getpid()) + " " +
         std::to_string(std::chrono::steady_clock::now().time_since_epoch().count()) + "\n";
}

TEST(CompilePool, ACandidateCompiledAheadIsACacheHitForTheEvaluator) {
  compile_pool pool(1, std::chrono::seconds(120));
  const std::string src = unique_source();
  pool.submit("cpu", src, {});
  pool.submit("cpu", src, {});  // queued once
  // Give the pool the time an evaluation ahead of this one would take.
  for (int i = 0; i < 600 && pool.compiled() == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  pool.settle("cpu", src);
  EXPECT_EQ(pool.compiled(), 1u);
  EXPECT_EQ(pool.taken_back(), 0u);
  auto be = make_backend("cpu", std::chrono::seconds(120));
  ASSERT_TRUE(be.has_value()) << be.error().message;
  auto c = check_statically(**be, src, {});
  ASSERT_TRUE(c.has_value()) << c.error().message;
  EXPECT_EQ(c->result, status::ok) << c->reason;
  EXPECT_TRUE(c->kernel.report.cached) << "the pool compiled it: the evaluator's compile is a hit";
}

TEST(CompilePool, ABrokenCandidateIsLeftForTheEvaluatorToJudge) {
  compile_pool pool(2, std::chrono::seconds(120));
  const std::string src = "this is not C++ " + std::to_string(::getpid());
  pool.submit("cpu", src, {});
  pool.settle("cpu", src);
  auto be = make_backend("cpu", std::chrono::seconds(120));
  ASSERT_TRUE(be.has_value());
  auto c = check_statically(**be, src, {});
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->result, status::compile_failed);
}

TEST(CompilePool, AJobForAnUnknownBackendEndsAndTheNextOneStillRuns) {
  compile_pool pool(1, std::chrono::seconds(120));
  pool.submit("no_such_backend", "x", {});
  const std::string src = unique_source();
  pool.submit("cpu", src, {});
  for (int i = 0; i < 600 && pool.compiled() < 2; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  pool.settle("no_such_backend", "x");
  pool.settle("cpu", src);
  EXPECT_EQ(pool.compiled(), 2u) << "the worker thread survived the unknown backend";
  auto be = make_backend("cpu", std::chrono::seconds(120));
  ASSERT_TRUE(be.has_value());
  auto c = check_statically(**be, src, {});
  ASSERT_TRUE(c.has_value());
  EXPECT_TRUE(c->kernel.report.cached);
}

}  // namespace
}  // namespace kevolve::eval
