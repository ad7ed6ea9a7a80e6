// The PyTorch baselines beside the timed baseline in `kevolve eval`'s table
// and in the summaries (text, Markdown, CSV): shown where measured, absent
// otherwise, with the reason when they could not be measured.
#include <gtest/gtest.h>

#include "report/summary.h"
#include "report/verdict_table.h"

using namespace kevolve;

namespace {

store::sweep_record record(double eager_s, double compile_s) {
  store::sweep_record r;
  store::task_record t;
  t.id = "softmax/fp32/cuda";
  t.baseline = "plain CUDA";
  t.stop_reason = "done";
  auto& n = t.search.nodes.at(t.search.nodes.add_child(0, search::memory_mode::inherit, {0}, 1.0));
  n.state = search::node_state::evaluated;
  n.result = eval::status::ok;
  n.fitness = 3.0;
  for (const char* shape : {"a", "b"}) {
    store::shape_measurement m;
    m.node = n.id;
    m.shape = shape;
    m.status = "ok";
    m.candidate_median_s = 1e-3;
    m.baseline_median_s = 3e-3;
    m.speedup = 3.0;
    m.torch_eager_median_s = eager_s;
    m.torch_compile_median_s = shape[0] == 'a' ? compile_s : compile_s * 4;
    t.measurements.push_back(m);
  }
  r.tasks.push_back(std::move(t));
  return r;
}

TEST(TorchColumns, SummaryShowsSpeedupsOverEagerAndCompile) {
  const auto s = report::summarize(record(4e-3, 1e-3));
  ASSERT_EQ(s.size(), 1u);
  EXPECT_DOUBLE_EQ(s[0].best_speedup, 3.0);
  EXPECT_NEAR(s[0].best_vs_eager, 4.0, 1e-12);
  EXPECT_NEAR(s[0].best_vs_compile, 2.0, 1e-12);  // geometric mean of 1x and 4x
  const std::string text = report::summary_text(s);
  EXPECT_NE(text.find("vs torch eager"), std::string::npos) << text;
  EXPECT_NE(text.find("4.00x"), std::string::npos) << text;
  EXPECT_NE(report::summary_markdown(s).find("| vs torch.compile |"), std::string::npos);
  const std::string csv = report::summary_csv(s);
  EXPECT_NE(csv.find(",best_vs_torch_eager,best_vs_torch_compile\n"), std::string::npos) << csv;
  EXPECT_NE(csv.find(",4.0000,2.0000\n"), std::string::npos) << csv;
}

TEST(TorchColumns, AbsentWithoutPyTorchTimes) {
  const auto s = report::summarize(record(0, 0));
  EXPECT_EQ(s[0].best_vs_eager, 0.0);
  EXPECT_EQ(report::summary_text(s).find("torch"), std::string::npos);
  EXPECT_EQ(report::summary_csv(s).find("torch"), std::string::npos);
}

TEST(TorchColumns, EvalTableShowsTimesSpeedupsAndWhyNot) {
  eval::verdict v;
  v.result = eval::status::ok;
  eval::shape_verdict s;
  s.shape = "rows";
  s.result = eval::status::ok;
  s.candidate = {10, 1e-3, 0.9e-3, 1.1e-3};
  s.baseline = {10, 2e-3, 1.9e-3, 2.1e-3};
  s.speedup = 2.0;
  s.torch_eager.time = {10, 5e-3, 4.9e-3, 5.1e-3};
  s.torch_eager.speedup = 5.0;
  s.torch_compile.note = "unavailable: took longer than 600 s";
  v.shapes.push_back(s);
  const std::string t = report::verdict_table(v);
  EXPECT_NE(t.find("torch eager"), std::string::npos) << t;
  EXPECT_NE(t.find("5.00 ms (5.00x)"), std::string::npos) << t;
  EXPECT_NE(t.find("torch.compile at rows: unavailable: took longer than 600 s"), std::string::npos) << t;
  const auto j = eval::to_json(v);
  EXPECT_EQ(j["shapes"][0]["torch_eager"]["speedup"], 5.0);
  EXPECT_EQ(j["shapes"][0]["torch_compile"]["note"], "unavailable: took longer than 600 s");
  EXPECT_FALSE(j["shapes"][0]["torch_compile"].contains("median_s"));
}

}  // namespace
