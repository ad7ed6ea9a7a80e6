// The evaluator rank's service: whatever throws while one candidate is
// evaluated becomes that candidate's error, with its message, and the next
// candidate is evaluated as if nothing happened.
#include <gtest/gtest.h>

#include <stdexcept>
#include <vector>

#include "common/paths.h"
#include "eval/backends/cpu_backend.h"
#include "eval/backends/cpu_probe.h"
#include "eval/backends/registry.h"
#include "spec/operator_loader.h"
#include "support/test_env.h"
#include "sweep/evaluation_service.h"

namespace kevolve::sweep {
namespace {

// The cpu backend, except that compiling a source with the marker throws,
// as a bug deep in the pipeline would.
class throwing_backend : public eval::cpu_backend {
 public:
  explicit throwing_backend(std::chrono::seconds t) : cpu_backend(cache_root() / "compile" / "cpu", t) {}
  const char* name() const override { return "cpu_throwing"; }
  expected<eval::compiled_kernel> compile(const std::string& source, const std::vector<std::string>& libraries,
                                          const std::string& display_name) override {
    if (source.find("THROW_IN_THE_PIPELINE") != std::string::npos) {
      const std::vector<int> none;
      (void)none.at(3);  // std::out_of_range
    }
    return cpu_backend::compile(source, libraries, display_name);
  }
};

const eval::backend_descriptor& throwing_descriptor() {
  if (const auto* d = eval::find_backend("cpu_throwing")) return *d;
  eval::backend_descriptor d;
  d.name = "cpu_throwing";
  d.baseline_of = eval::host_backend().name;
  d.linkable_libraries = eval::host_backend().linkable_libraries;
  d.hooks.make = [](std::chrono::seconds t) -> std::unique_ptr<eval::backend> { return std::make_unique<throwing_backend>(t); };
  d.hooks.hardware = [](int threads) {
    auto hw = eval::cpu_hardware_profile(threads, false);
    if (hw) hw->backend = "cpu_throwing";
    return hw;
  };
  auto r = eval::register_backend(d);
  EXPECT_TRUE(r.has_value()) << r.error().message;
  return **r;
}

TEST(EvaluationService, AnExceptionInTheEvaluationOfOneCandidateIsItsErrorAndTheServiceLivesOn) {
  const eval::backend_descriptor& d = throwing_descriptor();
  const spec::operator_spec op = testing::test_operator("t_softmax");
  eval_request r;
  r.task_id = "t_softmax/fp32/" + d.name;
  r.op_source = op.file.string();
  r.op_hash = operator_files_hash(op);
  r.variant = "fp32";
  r.backend = d.name;
  r.settings.threads = 2;
  r.settings.budget_seconds = 0.05;
  r.settings.timeout_ms = 1500;
  r.settings.trials = 2;
  const std::string good = testing::kernel_source("softmax_good.cpp");

  task_evaluators service(1);
  r.id = 1;
  r.code = good + "\n// THROW_IN_THE_PIPELINE\n";
  const eval_result thrown = service.evaluate(r);
  EXPECT_EQ(thrown.id, 1u);
  EXPECT_NE(thrown.error.find("the evaluator threw while evaluating this candidate"), std::string::npos) << thrown.error;
  EXPECT_NE(thrown.error.find("vector"), std::string::npos) << "the exception's own message: " << thrown.error;
  EXPECT_TRUE(thrown.status.empty());

  r.id = 2;
  r.code = good;
  const eval_result next = service.evaluate(r);
  EXPECT_TRUE(next.error.empty()) << next.error;
  EXPECT_EQ(next.status, "ok") << next.reason;
  EXPECT_GT(next.fitness, 0.0);
}

}  // namespace
}  // namespace kevolve::sweep
