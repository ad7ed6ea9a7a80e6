// What the synthesizers are shown of a parent: the bottleneck and roofline
// fraction of its worst timed shape and the hardware counters of its worst
// profiled timed shape (cuda profiles only the largest), straight from a
// verdict and again after --resume, where they come back from the store.
#include <gtest/gtest.h>

#include <fstream>

#include "common/fs.h"
#include "store/hdf5_store.h"
#include "sweep/scheduler.h"

namespace kevolve::sweep {
namespace {

store::shape_measurement shape(const std::string& name, double roofline, bool holdout,
                               std::map<std::string, double> metrics) {
  store::shape_measurement m;
  m.shape = name;
  m.status = "ok";
  m.holdout = holdout;
  m.candidate_median_s = holdout ? 0.0 : 1e-4;
  m.roofline_fraction = roofline;
  m.bottleneck = "memory-bound";
  if (!metrics.empty()) m.profile = name + ": dram " + std::to_string(metrics["dram_pct"]) + "%";
  m.metrics = std::move(metrics);
  return m;
}

struct sweep_dir {
  temp_dir dir = *temp_dir::create("kevolve-node-diagnosis-");
  spec::sweep_spec spec;
  sweep_dir() {
    const auto cfg = dir.path() / "sweep.yaml";
    std::ofstream(cfg) << "sweep:\n  operators: [" << KEVOLVE_TEST_SOURCE_DIR
                       << "/tests/data/operators/ts_silu.yaml]\n  backends: [cpu]\n  synthesizer: builtin\n"
                       << "search:\n  policy: greedy\n  memory: inherit\n  max_in_flight: 1\n"
                       << "  stop: {max_evaluations: 6}\n";
    auto s = spec::load_sweep(cfg);
    EXPECT_TRUE(s.has_value()) << s.error().message;
    if (s) spec = *s;
  }
  std::unique_ptr<scheduler> open(bool resume) {
    run_options o;
    o.store = dir.path() / "s.h5";
    o.resume = resume;
    auto s = scheduler::create(spec, o);
    EXPECT_TRUE(s.has_value()) << s.error().message;
    return s ? std::move(*s) : nullptr;
  }
};

// The context item of `node` in the next synthesis job, or nullptr.
const synth::context_item* item_in(const work& w, int64_t node) {
  if (!w.job) return nullptr;
  for (const auto& c : w.job->request.context)
    if (c.id == node) return &c;
  return nullptr;
}

TEST(NodeDiagnosis, AParentIsShownItsWorstShapeAndItsWorstProfiledShapesMetricsAlsoAfterResume) {
  sweep_dir d;
  auto s = d.open(false);
  ASSERT_TRUE(s);
  work w = s->next("cpu");
  ASSERT_TRUE(w.job.has_value());
  synth::synthesis_result code;
  code.ok = true;
  code.code = "a";
  code.origin = "test";
  auto req = s->written(*w.job, code);
  ASSERT_TRUE(req.has_value());
  eval_result r;
  r.id = req->id;
  r.status = "ok";
  r.fitness = 1.5;
  // The worst timed shape is `small` (0.3), not profiled; the worst profiled
  // one is `mid`; the holdout is worse than both but never timed.
  const std::map<std::string, double> worst = {{"dram_pct", 41.0}, {"occupancy_pct", 23.5}};
  r.shapes = {shape("large", 0.7, false, {{"dram_pct", 88.0}, {"occupancy_pct", 90.0}}),
              shape("small", 0.3, false, {}),
              shape("mid", 0.5, false, worst),
              shape("tail", 0.1, true, {{"dram_pct", 5.0}})};
  ASSERT_TRUE(s->record(*req, r).has_value());

  const work next = s->next("cpu");
  const synth::context_item* parent = item_in(next, req->node);
  ASSERT_NE(parent, nullptr) << "the child of node " << req->node << " is shown its parent";
  EXPECT_EQ(parent->metrics, worst);
  EXPECT_DOUBLE_EQ(parent->roofline_fraction, 0.3);
  EXPECT_EQ(parent->bottleneck, "memory-bound");

  ASSERT_TRUE(store::write_store(d.dir.path() / "s.h5", s->snapshot()).has_value());
  s.reset();
  auto resumed = d.open(true);
  ASSERT_TRUE(resumed);
  const work again = resumed->next("cpu");
  const synth::context_item* back = item_in(again, req->node);
  ASSERT_NE(back, nullptr) << "after --resume, a child of node " << req->node << " is shown its parent";
  EXPECT_EQ(back->metrics, worst);
  EXPECT_DOUBLE_EQ(back->roofline_fraction, 0.3);
}

}  // namespace
}  // namespace kevolve::sweep
