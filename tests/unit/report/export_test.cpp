// `kevolve export --format trajectory`: a profiled node's step carries its
// shapes' profile lines and hardware counters; other steps have none.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "report/export.h"

using namespace kevolve;

TEST(Export, TrajectoryStepsCarryTheProfilesOfProfiledNodes) {
  store::sweep_record r;
  store::task_record t;
  t.id = "softmax/fp32/cuda";
  t.op = "softmax";
  t.backend = "cuda";
  for (int k = 0; k < 2; ++k) {
    auto& n = t.search.nodes.at(t.search.nodes.add_child(0, search::memory_mode::inherit, {0}, 1.0));
    n.state = search::node_state::evaluated;
    n.result = eval::status::ok;
    n.fitness = 1.0 + k;
    store::shape_measurement m;
    m.node = n.id;
    m.shape = "rows";
    m.status = "ok";
    if (k == 1) {
      m.profile = "dram 41% of peak, occupancy 22%";
      m.metrics = {{"dram_pct", 41.0}, {"occupancy_pct", 22.0}};
    }
    t.measurements.push_back(m);
  }
  t.search.best_fitness = 2.0;
  r.tasks.push_back(std::move(t));
  auto out = report::export_jsonl(r, "trajectory", {});
  ASSERT_TRUE(out.has_value()) << out.error().message;
  const auto j = nlohmann::json::parse(*out);
  const auto& steps = j["steps"];
  ASSERT_EQ(steps.size(), 2u);
  EXPECT_FALSE(steps[0].contains("profiles"));
  ASSERT_TRUE(steps[1].contains("profiles")) << steps[1].dump();
  ASSERT_EQ(steps[1]["profiles"].size(), 1u);
  EXPECT_EQ(steps[1]["profiles"][0]["shape"], "rows");
  EXPECT_EQ(steps[1]["profiles"][0]["profile"], "dram 41% of peak, occupancy 22%");
  EXPECT_EQ(steps[1]["profiles"][0]["metrics"]["occupancy_pct"], 22.0);
}
