#include <gtest/gtest.h>

#include <regex>

#include "report/html_report.h"
#include "report/report_data.h"
#include "report/summary.h"

using namespace kevolve;

namespace {

search::node& add(search::tree& t, search::node_id parent, eval::status s, double fitness, std::string reason = "",
                  std::string code = "int kevolve_kernel() { return 0; }") {
  auto& n = t.at(t.add_child(parent, search::memory_mode::inherit, {parent}, 1.0));
  n.state = search::node_state::evaluated;
  n.result = s;
  n.fitness = fitness;
  n.reason = std::move(reason);
  n.code = std::move(code);
  n.origin = "builtin:cpu/softmax";
  n.finished_s = double(n.id);
  return n;
}

store::shape_measurement measured(int64_t node, const char* shape, double gbs, double gflops, double fraction) {
  store::shape_measurement m;
  m.node = node;
  m.shape = shape;
  m.status = "ok";
  m.candidate_median_s = 1e-3;
  m.baseline_median_s = 2e-3;
  m.speedup = 2.0;
  m.achieved_gbs = gbs;
  m.achieved_gflops = gflops;
  m.roofline_fraction = fraction;
  return m;
}

// root -> 1 (ok 1.5) -> 3 (ok 2.0, best); root -> 2 (compile_failed); 1 -> 4, 5 (wrong_result)
store::sweep_record small_record() {
  store::sweep_record r;
  r.kevolve_version = "test";
  r.created_at = "2024-01-01T00:00:00Z";
  store::task_record t;
  t.id = "softmax/fp32/cpu";
  t.op = "softmax";
  t.variant = "fp32";
  t.backend = "cpu";
  t.baseline = "plain C++";
  t.stop_reason = "evaluation budget of 5 spent";
  auto& tree = t.search.nodes;
  add(tree, 0, eval::status::ok, 1.5);
  add(tree, 0, eval::status::compile_failed, 0.0, "error: expected ';' at line 12\nmore");
  add(tree, 1, eval::status::ok, 2.0, "", "// </script><script>alert(1)</script> <!-- http://example.com\n");
  add(tree, 1, eval::status::wrong_result, 0.0, "max error 0.31 at index 17 (tolerance 1e-05)");
  add(tree, 1, eval::status::wrong_result, 0.0, "max error 0.52 at index 3 (tolerance 1e-05)");
  // memory bound at 10 GB/s of a 20 GB/s roof; compute bound at 40 GFLOP/s of a 100 GFLOP/s roof
  t.measurements.push_back(measured(3, "small", 10.0, 1.0, 0.5));
  t.measurements.push_back(measured(3, "large", 2.0, 40.0, 0.4));
  r.tasks.push_back(std::move(t));
  return r;
}

}  // namespace

TEST(ReportData, SummaryNumbersAreThoseOfTheTextAndCsvSummaries) {
  const auto r = small_record();
  const auto j = report::report_data(r, "x.h5");
  const auto s = report::summarize(r);
  ASSERT_EQ(j["summary"].size(), 1u);
  EXPECT_EQ(j["summary"][0]["best_speedup"].get<double>(), s[0].best_speedup);
  EXPECT_EQ(j["summary"][0]["best_speedup"].get<double>(), 2.0);
  EXPECT_EQ(j["summary"][0]["evaluations"].get<int64_t>(), 5);
  EXPECT_EQ(j["summary"][0]["correct"].get<int64_t>(), 2);
  EXPECT_EQ(j["summary"][0]["best_roofline_fraction"].get<double>(), 0.4);  // the worst timed shape
  EXPECT_EQ(j["summary"][0]["failures"]["wrong_result"].get<int64_t>(), 2);
  EXPECT_EQ(j["summary"][0]["failures"]["compile_failed"].get<int64_t>(), 1);
  EXPECT_EQ(j["tasks"][0]["best_path"], nlohmann::json({0, 1, 3}));
  EXPECT_EQ(j["tasks"][0]["node_count"].get<int64_t>(), 6);
  EXPECT_EQ(j["tasks"][0]["eval_order"], nlohmann::json({1, 2, 3, 4, 5}));
}

TEST(ReportData, FailuresAreGroupedByStatusAndReasonWithNumbersMasked) {
  const auto g = report::report_data(small_record(), "x.h5")["tasks"][0]["failure_groups"];
  ASSERT_EQ(g.size(), 2u);
  EXPECT_EQ(g[0]["status"], "wrong_result");
  EXPECT_EQ(g[0]["count"], 2);
  EXPECT_EQ(g[0]["pattern"], "max error # at index # (tolerance #)");
  EXPECT_EQ(g[0]["nodes"], nlohmann::json({4, 5}));
  EXPECT_EQ(g[1]["pattern"], "error: expected ';' at line #");
  EXPECT_EQ(report::reason_pattern("fp32 on x86_64: -2.5 vs 0x1f"), "fp32 on x86_64: # vs #");
}

TEST(ReportData, RooflinePeaksFollowFromTheStoredFractions) {
  auto r = small_record();
  auto p = report::implied_peaks(r, "cpu");
  EXPECT_DOUBLE_EQ(p.peak_gbs, 20.0);
  EXPECT_DOUBLE_EQ(p.peak_gflops, 100.0);
  r.tasks[0].measurements.pop_back();  // only the memory-bound shape: compute peak unknown
  p = report::implied_peaks(r, "cpu");
  EXPECT_DOUBLE_EQ(p.peak_gbs, 20.0);
  EXPECT_EQ(p.peak_gflops, 0.0);
  EXPECT_EQ(report::implied_peaks(r, "cuda").peak_gbs, 0.0);
}

TEST(HtmlReport, StoreStringsCannotEndTheScriptAndNothingIsFetched) {
  const std::string html = report::html_report(small_record(), "runs/<x>.h5");
  // Only the page's own three script elements end; the code's "</script>" is escaped.
  size_t ends = 0;
  for (size_t k = html.find("</script>"); k != std::string::npos; k = html.find("</script>", k + 1)) ++ends;
  EXPECT_EQ(ends, 3u);
  EXPECT_EQ(html.find("<!-- http"), std::string::npos);
  EXPECT_NE(html.find("\\u003c/script>\\u003cscript>alert(1)"), std::string::npos);
  EXPECT_NE(html.find("<title>kevolve report: runs/&lt;x&gt;.h5</title>"), std::string::npos);
  EXPECT_NE(html.find("content=\"default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\""),
            std::string::npos);
  EXPECT_FALSE(std::regex_search(html, std::regex(R"((src|href)\s*=\s*["']?\s*(https?:)?//)", std::regex::icase)));
  EXPECT_EQ(html.find("@KEVOLVE_"), std::string::npos);
}
