// Rule conditions on hardware counters (`when.metrics`): all listed bounds
// must hold, a metric the parent lacks never matches, and a malformed
// condition is an error that names the rule and the key.
#include <gtest/gtest.h>

#include "synth/rules.h"

namespace kevolve::synth {
namespace {

rule_set rules_of(const char* text) {
  auto r = rule_set::from_json(nlohmann::json::parse(text), "rules.json");
  EXPECT_TRUE(r.has_value()) << (r ? "" : r.error().message);
  return r ? *r : rule_set{};
}

std::string error_of(const char* text) {
  auto r = rule_set::from_json(nlohmann::json::parse(text), "rules.json");
  return r ? "" : r.error().message;
}

context_item profiled(std::map<std::string, double> metrics) {
  context_item c;
  c.result = eval::status::ok;
  c.bottleneck = "memory-bound";
  c.roofline_fraction = 0.4;
  c.metrics = std::move(metrics);
  return c;
}

TEST(RuleMetrics, AllBoundsMustHoldAndAnAbsentMetricNeverMatches) {
  const rule_set rs = rules_of(R"({"rules": [{"name": "low_dram_low_occ",
      "when": {"status": ["ok"], "metrics": {"dram_pct": {"below": 60}, "occupancy_pct": {"below": 40, "above": 10}}},
      "do": [{"action": "increase", "param": "threads"}]}]})");
  ASSERT_EQ(rs.rules().size(), 1u);
  const rule& r = rs.rules()[0];
  ASSERT_EQ(r.when.metrics.size(), 2u);
  EXPECT_TRUE(rs.matches(r, profiled({{"dram_pct", 55}, {"occupancy_pct", 30}, {"sm_pct", 12}})));
  EXPECT_FALSE(rs.matches(r, profiled({{"dram_pct", 60}, {"occupancy_pct", 30}})));  // below is strict
  EXPECT_FALSE(rs.matches(r, profiled({{"dram_pct", 55}, {"occupancy_pct", 45}})));  // one bound fails
  EXPECT_FALSE(rs.matches(r, profiled({{"dram_pct", 55}, {"occupancy_pct", 5}})));   // under `above`
  EXPECT_FALSE(rs.matches(r, profiled({{"dram_pct", 55}})));                          // occupancy absent
  EXPECT_FALSE(rs.matches(r, profiled({})));                                          // not profiled
  context_item failed = profiled({{"dram_pct", 55}, {"occupancy_pct", 30}});
  failed.result = eval::status::wrong_result;
  EXPECT_FALSE(rs.matches(r, failed));  // the other conditions still count
}

TEST(RuleMetrics, MalformedConditionsNameTheRuleAndTheKey) {
  EXPECT_NE(error_of(R"({"rules": [{"when": {"status": ["ok"]}, "do": []},
                                   {"when": {"metrics": [1]}, "do": []}]})")
                .find("rules.json: 'rules[1].when.metrics' must be an object of metric bounds"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"rules": [{"when": {"metrics": {"dram_pct": 60}}, "do": []}]})")
                .find("'rules[0].when.metrics.dram_pct' must be {\"below\": n} and/or {\"above\": n}, got 60"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"rules": [{"when": {"metrics": {"dram_pct": {"under": 60}}}, "do": []}]})")
                .find("'rules[0].when.metrics.dram_pct.under' must be 'below' or 'above' with a number"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"rules": [{"when": {"metrics": {"dram_pct": {"below": "60"}}}, "do": []}]})")
                .find("'rules[0].when.metrics.dram_pct.below' must be 'below' or 'above' with a number, got \"60\""),
            std::string::npos);
}

// The shipped rules: some need counters, and those never match a parent
// without them, so a sweep without profiles decides as it did before.
TEST(RuleMetrics, ShippedMetricRulesAreInertWithoutAProfile) {
  auto rs = rule_set::load(std::filesystem::path(KEVOLVE_TEST_SOURCE_DIR) / "knowledge/templates/rules.json");
  ASSERT_TRUE(rs.has_value()) << rs.error().message;
  int with_metrics = 0;
  for (const char* bottleneck : {"memory-bound", "compute-bound", "latency-bound"}) {
    context_item bare = profiled({});
    bare.bottleneck = bottleneck;
    bare.roofline_fraction = 0.1;
    for (const auto& r : rs->rules()) {
      if (r.when.metrics.empty()) continue;
      ++with_metrics;
      EXPECT_FALSE(rs->matches(r, bare)) << r.name << " matches a parent without metrics";
    }
  }
  EXPECT_GE(with_metrics, 3 * 3) << "the shipped rules have at least three metric rules";
}

}  // namespace
}  // namespace kevolve::synth
