// The attainable ceiling beside the roofline fraction in `kevolve eval`'s
// table and JSON and in the summaries (text, Markdown, CSV): shown where the
// backend has a ceiling (mtia_emu), absent otherwise.
#include <gtest/gtest.h>

#include "report/summary.h"
#include "report/verdict_table.h"

using namespace kevolve;

namespace {

store::sweep_record record(bool with_ceiling) {
  store::sweep_record r;
  store::task_record t;
  t.id = "conv1d/fp32/mtia_emu";
  t.baseline = "mtia_emu: shifted-weight DPE tiles";
  t.stop_reason = "done";
  auto& n = t.search.nodes.at(t.search.nodes.add_child(0, search::memory_mode::inherit, {0}, 1.0));
  n.state = search::node_state::evaluated;
  n.result = eval::status::ok;
  n.fitness = 1.3;
  for (const char* shape : {"a", "b"}) {
    store::shape_measurement m;
    m.node = n.id;
    m.shape = shape;
    m.status = "ok";
    m.candidate_median_s = 1e-3;
    m.baseline_median_s = 1.3e-3;
    m.speedup = 1.3;
    m.roofline_fraction = shape[0] == 'a' ? 0.35 : 0.27;
    if (with_ceiling) {
      m.attainable_fraction = shape[0] == 'a' ? 0.78 : 0.81;
      m.bound = shape[0] == 'a' ? "DPE split" : "launch + DPE split";
    }
    t.measurements.push_back(m);
  }
  r.tasks.push_back(std::move(t));
  return r;
}

// The summary holds a task to its worst shape on both measures (each its own worst).
TEST(CeilingColumns, SummaryShowsTheWorstShapeAgainstItsCeiling) {
  const auto s = report::summarize(record(true));
  ASSERT_EQ(s.size(), 1u);
  EXPECT_DOUBLE_EQ(s[0].best_roofline, 0.27);
  EXPECT_DOUBLE_EQ(s[0].best_attainable, 0.78);
  EXPECT_EQ(s[0].best_bound, "DPE split");
  const std::string text = report::summary_text(s);
  EXPECT_NE(text.find("attainable"), std::string::npos) << text;
  EXPECT_NE(text.find("78.0%"), std::string::npos) << text;
  EXPECT_NE(report::summary_markdown(s).find("| attainable | bound |"), std::string::npos) << report::summary_markdown(s);
  const std::string csv = report::summary_csv(s);
  EXPECT_NE(csv.find(",best_attainable_fraction,best_bound\n"), std::string::npos) << csv;
  EXPECT_NE(csv.find(",0.7800,\"DPE split\"\n"), std::string::npos) << csv;
}

TEST(CeilingColumns, AbsentWithoutACeiling) {
  const auto s = report::summarize(record(false));
  EXPECT_EQ(s[0].best_attainable, 0.0);
  EXPECT_EQ(report::summary_text(s).find("attainable"), std::string::npos);
  EXPECT_EQ(report::summary_csv(s).find("attainable"), std::string::npos);
}

TEST(CeilingColumns, EvalTableAndJsonShowTheFractionAndTheBound) {
  eval::verdict v;
  v.result = eval::status::ok;
  eval::shape_verdict s;
  s.shape = "rows";
  s.result = eval::status::ok;
  s.candidate = {1, 1e-3, 1e-3, 1e-3};
  s.baseline = {1, 2e-3, 2e-3, 2e-3};
  s.speedup = 2.0;
  s.roofline_fraction = 0.59;
  s.attainable_fraction = 0.805;
  s.bound = "launch + memory (SRAM)";
  v.shapes.push_back(s);
  const std::string t = report::verdict_table(v);
  EXPECT_NE(t.find("roofline  attainable  bound"), std::string::npos) << t;
  EXPECT_NE(t.find("59%       80.5%       launch + memory (SRAM)"), std::string::npos) << t;
  const auto j = eval::to_json(v);
  EXPECT_EQ(j["shapes"][0]["attainable_fraction"], 0.805);
  EXPECT_EQ(j["shapes"][0]["bound"], "launch + memory (SRAM)");
  s.attainable_fraction = 0;  // no ceiling (cpu, cuda, hip): no columns
  s.bound.clear();
  v.shapes = {s};
  EXPECT_EQ(report::verdict_table(v).find("attainable"), std::string::npos);
  EXPECT_FALSE(eval::to_json(v)["shapes"][0].contains("attainable_fraction"));
}

}  // namespace
