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

// A profiled shape carries its profile line and metrics into the report's
// data (the node panel lists the profile lines); others carry "" and null.
TEST(ReportData, MeasurementsCarryTheProfileAndMetricsWhereProfiled) {
  auto r = small_record();
  r.tasks[0].measurements[0].profile = "dram 41% of peak, occupancy 22%";
  r.tasks[0].measurements[0].metrics = {{"dram_pct", 41.0}, {"occupancy_pct", 22.0}};
  const auto j = report::report_data(r, "x.h5");
  const auto& fields = j["measurement_fields"];
  size_t profile = fields.size(), metrics = fields.size();
  for (size_t k = 0; k < fields.size(); ++k) {
    if (fields[k] == "profile") profile = k;
    if (fields[k] == "metrics") metrics = k;
  }
  ASSERT_LT(profile, fields.size());
  ASSERT_LT(metrics, fields.size());
  const auto& rows = j["tasks"][0]["measurements"];
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].size(), fields.size());
  EXPECT_EQ(rows[0][profile], "dram 41% of peak, occupancy 22%");
  EXPECT_EQ(rows[0][metrics]["dram_pct"], 41.0);
  EXPECT_EQ(rows[1][profile], "");
  EXPECT_TRUE(rows[1][metrics].is_null());
}

// The attainable ceiling (schema 6) reaches the page beside the roofline:
// per measurement by field name, and per task in the summary the page's
// "% of attainable" and "bound" columns read.
TEST(ReportData, MeasurementsAndSummaryCarryTheAttainableCeiling) {
  auto r = small_record();
  for (auto& m : r.tasks[0].measurements) {
    m.attainable_fraction = 0.9;
    m.bound = "integer engines";
  }
  r.tasks[0].measurements[0].attainable_fraction = 0.81;
  r.tasks[0].measurements[0].bound = "launch + memory (SRAM)";
  const auto j = report::report_data(r, "x.h5");
  const auto& fields = j["measurement_fields"];
  size_t attainable = fields.size(), bound = fields.size();
  for (size_t k = 0; k < fields.size(); ++k) {
    if (fields[k] == "attainable_fraction") attainable = k;
    if (fields[k] == "bound") bound = k;
  }
  ASSERT_LT(attainable, fields.size());
  ASSERT_LT(bound, fields.size());
  const auto& rows = j["tasks"][0]["measurements"];
  EXPECT_EQ(rows[0].size(), fields.size());
  EXPECT_EQ(rows[0][attainable], 0.81);
  EXPECT_EQ(rows[0][bound], "launch + memory (SRAM)");
  const auto& summary = j["summary"][0];
  EXPECT_EQ(summary["best_attainable_fraction"], 0.81);  // the best node's worst shape
  EXPECT_EQ(summary["best_bound"], "launch + memory (SRAM)");
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

namespace {

store::llm_exchange exchange(int64_t node, std::string status, std::string prompt, std::string reply) {
  store::llm_exchange x;
  x.node = node;
  x.endpoint = "coder@127.0.0.1";
  x.model = "coder";
  x.status = std::move(status);
  x.prompt = std::move(prompt);
  x.reply = std::move(reply);
  x.attempts = 1;
  return x;
}

// Node 3 was written from an ok reply; node 2's reply had no code.
store::sweep_record llm_record() {
  auto r = small_record();
  auto ok = exchange(3, "ok",
                     R"([{"role":"system","content":"be fast"},{"role":"user","content":"write softmax </script><script>alert(2)</script>"}])",
                     "```cpp\n// </script><script>alert(3)</script>\n```\n");
  ok.documents = "constraints/cpu.md\nguides/debugging.md\n";
  ok.prompt_tokens = 1200;
  ok.completion_tokens = 300;
  ok.cost = 0.0024;
  ok.latency_s = 1.5;
  auto unusable = exchange(2, "unusable", "not a JSON array", "I would rather not.");
  unusable.error = "the reply has no fenced code block or diff";
  unusable.prompt_tokens = 1000;
  unusable.completion_tokens = 5;
  unusable.cost = 0.00102;
  r.tasks[0].llm = {ok, unusable};
  return r;
}

}  // namespace

TEST(ReportData, LlmExchangesGoWithTheCodeAndTheirTotalsIntoTheSummary) {
  const auto r = llm_record();
  const auto x = report::report_code(r)[0]["llm"];
  ASSERT_EQ(x.size(), 2u);
  EXPECT_EQ(x[0]["node"], 3);
  EXPECT_EQ(x[0]["status"], "ok");
  ASSERT_EQ(x[0]["messages"].size(), 2u);
  EXPECT_EQ(x[0]["messages"][0]["role"], "system");
  EXPECT_EQ(x[0]["messages"][1]["content"], "write softmax </script><script>alert(2)</script>");
  EXPECT_EQ(x[0]["reply"], r.tasks[0].llm[0].reply);
  EXPECT_EQ(x[0]["documents"], nlohmann::json({"constraints/cpu.md", "guides/debugging.md"}));
  EXPECT_EQ(x[0]["prompt_tokens"], 1200);
  EXPECT_EQ(x[0]["completion_tokens"], 300);
  EXPECT_EQ(x[0]["cost"].get<double>(), 0.0024);
  // a stored prompt that is not a message array is shown whole, as it is
  ASSERT_EQ(x[1]["messages"].size(), 1u);
  EXPECT_EQ(x[1]["messages"][0]["content"], "not a JSON array");
  EXPECT_EQ(x[1]["error"], "the reply has no fenced code block or diff");

  const auto data = report::report_data(r, "x.h5");
  const auto llm = data["summary"][0]["llm"];
  EXPECT_EQ(llm["requests"], 2);
  EXPECT_EQ(llm["prompt_tokens"], 2200);
  EXPECT_EQ(llm["completion_tokens"], 305);
  EXPECT_DOUBLE_EQ(llm["cost"].get<double>(), 0.0024 + 0.00102);
  EXPECT_EQ(llm["by_status"], nlohmann::json({{"ok", 1}, {"unusable", 1}}));
  // prompts and replies stay out of the block parsed on load
  EXPECT_EQ(data.dump().find("write softmax"), std::string::npos);
  EXPECT_EQ(report::report_data(small_record(), "x.h5")["summary"][0]["llm"]["requests"], 0);
}

TEST(HtmlReport, LlmPromptsAndRepliesCannotEndTheScript) {
  const std::string html = report::html_report(llm_record(), "x.h5");
  size_t ends = 0;
  for (size_t k = html.find("</script>"); k != std::string::npos; k = html.find("</script>", k + 1)) ++ends;
  EXPECT_EQ(ends, 3u);
  EXPECT_NE(html.find("write softmax \\u003c/script>\\u003cscript>alert(2)"), std::string::npos);
  EXPECT_NE(html.find("// \\u003c/script>\\u003cscript>alert(3)"), std::string::npos);
  EXPECT_EQ(html.find("<script>alert("), std::string::npos);
  // both exchanges are in the lazily parsed block, after the page's data
  EXPECT_GT(html.find("write softmax"), html.find("id=\"kv-code\""));
}
