// The coordinator's decisions without actors or MPI: the outbox it returns
// for each event is what the actors deliver.
#include "sweep/coordinator.h"

#include <gtest/gtest.h>

#include <csignal>
#include <fstream>

#include "common/fs.h"

namespace kevolve::sweep {
namespace {

struct fixture {
  temp_dir dir = *temp_dir::create("kevolve-coordinator-");
  std::unique_ptr<coordinator> c;

  explicit fixture(const std::set<int>& remote = {}) {
    const auto cfg = dir.path() / "sweep.yaml";
    std::ofstream(cfg) << "sweep:\n  operators: [" << KEVOLVE_TEST_SOURCE_DIR
                       << "/tests/data/operators/ts_silu.yaml]\n  backends: [cpu]\n"
                       << "search:\n  policy: greedy\n  max_in_flight: 2\n  stop: {max_evaluations: 4}\n"
                       << "runtime: {silence_seconds: 10, deadline_seconds: 30}\n";
    auto spec = spec::load_sweep(cfg);
    EXPECT_TRUE(spec.has_value()) << spec.error().message;
    run_options o;
    o.store = dir.path() / "s.h5";
    auto s = scheduler::create(*spec, o);
    EXPECT_TRUE(s.has_value()) << s.error().message;
    c = std::make_unique<coordinator>(std::move(*s), remote);
  }
};

synth::synthesis_result code(const std::string& text) {
  synth::synthesis_result r;
  r.ok = true;
  r.code = text;
  r.origin = "test";
  return r;
}

eval_result verdict(const eval_request& q, int rank, const std::string& status) {
  eval_result r;
  r.id = q.id;
  r.rank = rank;
  r.status = status;
  r.fitness = status == "ok" ? 1.5 : 0.0;
  return r;
}

TEST(Coordinator, StartsWithACheckpointAndChildrenForEveryFreeSlot) {
  fixture f;
  f.c->add_local_evaluator(0, "cpu", 0);
  outbox out = f.c->start(0);
  ASSERT_TRUE(out.checkpoint.has_value());  // the store exists from the start
  EXPECT_EQ(out.synthesis.size(), 2u);      // max_in_flight 2, two free slots
  outbox w = f.c->on_written(out.synthesis[0], code("a"), 1);
  ASSERT_EQ(w.evaluations.size(), 1u);
  EXPECT_EQ(w.evaluations[0].first, 0);
  EXPECT_EQ(w.evaluations[0].second.code, "a");
}

TEST(Coordinator, AFailureThatEndsDuringAStopStaysPendingForResume) {
  fixture f;
  f.c->add_local_evaluator(0, "cpu", 0);
  outbox out = f.c->start(0);
  f.c->on_checkpoint_done(out.checkpoint_sequence, "", 0);
  const eval_request a = f.c->on_written(out.synthesis[0], code("a"), 1).evaluations.at(0).second;
  const eval_request b = f.c->on_written(out.synthesis[1], code("b"), 1).evaluations.at(0).second;
  outbox stop = f.c->on_signal(0, SIGTERM, 2);
  EXPECT_FALSE(stop.checkpoint.has_value());  // two evaluations still out
  outbox r1 = f.c->on_result(verdict(a, 0, "crashed"), 3);
  ASSERT_EQ(r1.notices.size(), 1u);
  EXPECT_NE(r1.notices[0].find("kept pending"), std::string::npos);
  outbox r2 = f.c->on_result(verdict(b, 0, "ok"), 4);
  ASSERT_TRUE(r2.checkpoint.has_value());  // nothing out any more: the final checkpoint
  const auto& nodes = r2.checkpoint->tasks[0].search.nodes;
  EXPECT_EQ(nodes.at(a.node).state, search::node_state::pending);
  EXPECT_EQ(nodes.at(b.node).state, search::node_state::evaluated);
  EXPECT_EQ(nodes.at(b.node).rank, 0);
  f.c->on_checkpoint_done(r2.checkpoint_sequence, "", 5);
  EXPECT_TRUE(f.c->done());
  EXPECT_EQ(f.c->result().how, outcome::kind::interrupted);
  EXPECT_EQ(f.c->result().interrupted_by, "SIGTERM on rank 0");
}

TEST(Coordinator, RanksThatDoNotSayByeAreNotWaitedForInFinalize) {
  fixture f({1, 2});
  rank_hello h;
  h.host = "n";
  h.backend = "cpu";
  h.rank = 1;
  f.c->start(0);
  EXPECT_TRUE(f.c->on_hello(h, 0).starts.empty());  // rank 2 has not said hello yet
  h.rank = 2;
  outbox go = f.c->on_hello(h, 0);
  EXPECT_EQ(go.starts.size(), 2u);
  EXPECT_EQ(go.starts[0].second.device_index, -1);  // cpu ranks own no GPU
  f.c->on_checkpoint_done(go.checkpoint_sequence, "", 0);
  outbox stop = f.c->on_signal(1, SIGUSR1, 1);
  ASSERT_TRUE(stop.checkpoint.has_value());  // nothing in flight: at once
  outbox fin = f.c->on_checkpoint_done(stop.checkpoint_sequence, "", 2);
  EXPECT_EQ(fin.stops, (std::vector<int>{1, 2}));
  EXPECT_FALSE(f.c->done());
  f.c->on_bye(1, 3);
  outbox late = f.c->on_tick(20);  // rank 2 never answers
  EXPECT_EQ(late.shutdowns, (std::vector<int>{1, 2}));
  EXPECT_FALSE(late.finalize);
  EXPECT_TRUE(f.c->done());
}

TEST(Coordinator, ARankThatCannotServeStopsTheSweepBeforeAnythingIsWritten) {
  fixture f({1});
  f.c->start(0);
  rank_hello h;
  h.rank = 1;
  h.host = "gpu7";
  h.error = "given backend 'cuda' by KEVOLVE_BACKEND, but no CUDA device";
  outbox out = f.c->on_hello(h, 0);
  EXPECT_FALSE(out.checkpoint.has_value());
  EXPECT_EQ(out.stops, (std::vector<int>{1}));  // it waits to hear the sweep is off, then exits non-zero
  outbox bye = f.c->on_bye(1, 1);
  EXPECT_EQ(bye.shutdowns, (std::vector<int>{1}));
  EXPECT_TRUE(f.c->done());
  EXPECT_EQ(f.c->result().how, outcome::kind::failed);
  EXPECT_NE(f.c->result().failure.message.find("rank 1 (gpu7): given backend 'cuda'"), std::string::npos);
}

}  // namespace
}  // namespace kevolve::sweep
