// The coordinator's decisions without actors or MPI: the outbox it returns
// for each event is what the actors deliver.
#include "sweep/coordinator.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <csignal>
#include <fstream>

#include "common/fs.h"

namespace kevolve::sweep {
namespace {

// A rank's hello: the backend it serves, or the error that keeps it from serving.
rank_hello hello(int rank, const std::string& host, const std::string& backend, const std::string& error = "") {
  rank_hello h;
  h.rank = rank;
  h.host = host;
  h.backend = backend;
  h.error = error;
  return h;
}

struct fixture {
  temp_dir dir = *temp_dir::create("kevolve-coordinator-");
  std::unique_ptr<coordinator> c;

  explicit fixture(const std::set<int>& remote = {}, const std::string& synthesizer = "builtin", int in_flight = 2) {
    const auto cfg = dir.path() / "sweep.yaml";
    std::ofstream(cfg) << "sweep:\n  operators: [" << KEVOLVE_TEST_SOURCE_DIR
                       << "/tests/data/operators/ts_silu.yaml]\n  backends: [cpu]\n  synthesizer: " << synthesizer << "\n"
                       << "search:\n  policy: greedy\n  max_in_flight: " << in_flight << "\n  stop: {max_evaluations: 4}\n"
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

eval_result verdict(const eval_request& q, int rank, const std::string& status, double fitness = 1.5) {
  eval_result r;
  r.id = q.id;
  r.rank = rank;
  r.status = status;
  r.fitness = status == "ok" ? fitness : 0.0;
  return r;
}

// In an llm sweep, a child that beats the best and grew from another node
// gets a note job; the run's final checkpoint waits for the note, which is
// kept as a skill of the task with its exchange.
TEST(Coordinator, AnImprovementInAnLlmSweepAsksForANoteAndTheEndWaitsForIt) {
  fixture f({}, "llm", 1);
  f.c->add_local_evaluator(0, "cpu", 0);
  outbox out = f.c->start(0);
  f.c->on_checkpoint_done(out.checkpoint_sequence, "", 0);
  ASSERT_EQ(out.synthesis.size(), 1u);
  const eval_request a = f.c->on_written(out.synthesis[0], code("a"), 1).evaluations.at(0).second;
  outbox ra = f.c->on_result(verdict(a, 0, "ok", 1.5), 2);
  ASSERT_EQ(ra.synthesis.size(), 1u);
  EXPECT_FALSE(ra.synthesis[0].note.has_value());  // the first child grew from the root: nothing to compare
  synth_job next = ra.synthesis[0];
  eval_request q = f.c->on_written(next, code("b"), 3).evaluations.at(0).second;
  outbox rb = f.c->on_result(verdict(q, 0, "ok", 1.2), 4);  // no improvement: no note
  for (const auto& j : rb.synthesis) EXPECT_FALSE(j.note.has_value());
  next = rb.synthesis.at(0);
  q = f.c->on_written(next, code("c"), 5).evaluations.at(0).second;
  outbox rc = f.c->on_result(verdict(q, 0, "ok", 2.0), 6);
  const synth_job* note = nullptr;
  for (const auto& j : rc.synthesis)
    if (j.note) note = &j;
  ASSERT_NE(note, nullptr);
  EXPECT_EQ(note->node, q.node);
  EXPECT_EQ(note->note->child.code, "c");
  EXPECT_GT(note->note->parent.id, 0);
  EXPECT_DOUBLE_EQ(note->note->child.fitness, 2.0);
  EXPECT_EQ(note->note->hardware, "x86");
  const synth_job note_job = *note;
  // The last evaluation: the task is done, but the note is still out.
  next = *std::find_if(rc.synthesis.begin(), rc.synthesis.end(), [](const synth_job& j) { return !j.note; });
  q = f.c->on_written(next, code("d"), 7).evaluations.at(0).second;
  outbox rd = f.c->on_result(verdict(q, 0, "ok", 1.0), 8);
  EXPECT_FALSE(rd.checkpoint.has_value());
  synth::note_result n;
  n.status = "accepted";
  n.note = "one pass";
  n.calls.resize(1);
  n.calls[0].purpose = "skill_note";
  n.calls[0].model = "coder";
  outbox done = f.c->on_noted(note_job, n, 9);
  ASSERT_TRUE(done.checkpoint.has_value());  // now the final one
  const store::task_record& t = done.checkpoint->tasks[0];
  ASSERT_EQ(t.skills.size(), 1u);
  EXPECT_EQ(t.skills[0].node, note_job.node);
  EXPECT_EQ(t.skills[0].parent, note_job.note->parent.id);
  EXPECT_EQ(t.skills[0].note, "one pass");
  EXPECT_TRUE(t.skills[0].accepted);
  ASSERT_EQ(t.skills[0].exchange, int64_t(t.llm.size()) - 1);
  EXPECT_EQ(t.llm.back().purpose, "skill_note");
  EXPECT_NE(t.skills[0].evidence.find("\"model\":\"coder\""), std::string::npos) << t.skills[0].evidence;
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
  f.c->start(0);
  EXPECT_TRUE(f.c->on_hello(hello(1, "n", "cpu"), 0).starts.empty());  // rank 2 has not said hello yet
  outbox go = f.c->on_hello(hello(2, "n", "cpu"), 0);
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
  outbox out = f.c->on_hello(hello(1, "gpu7", "", "given backend 'cuda' by KEVOLVE_BACKEND, but no CUDA device"), 0);
  EXPECT_FALSE(out.checkpoint.has_value());
  EXPECT_EQ(out.stops, (std::vector<int>{1}));  // it waits to hear the sweep is off, then exits non-zero
  outbox bye = f.c->on_bye(1, 1);
  EXPECT_EQ(bye.shutdowns, (std::vector<int>{1}));
  EXPECT_TRUE(f.c->done());
  EXPECT_EQ(f.c->result().how, outcome::kind::failed);
  EXPECT_NE(f.c->result().failure.message.find("rank 1 (gpu7): given backend 'cuda'"), std::string::npos);
}

// A backend whose only rank was retired ends the sweep, and the failure
// says which rank was retired and why, not "all retired".
TEST(Coordinator, ABackendWhoseRanksWereRetiredSaysWhichAndWhy) {
  fixture f({1});
  f.c->start(0);
  outbox go = f.c->on_hello(hello(1, "n", "cpu"), 0);
  ASSERT_EQ(go.starts.size(), 1u);
  f.c->on_checkpoint_done(go.checkpoint_sequence, "", 0);
  f.c->on_tick(60);  // silent for longer than silence_seconds (10)
  ASSERT_EQ(f.c->result().how, outcome::kind::failed);
  const std::string& m = f.c->result().failure.message;
  EXPECT_NE(m.find("no evaluator rank for backend 'cpu' is left: rank 1 retired ("), std::string::npos) << m;
  EXPECT_NE(m.find("heard from"), std::string::npos) << m;
  EXPECT_EQ(m.find("all retired"), std::string::npos) << m;
}

// The hellos arrive on the transport's thread and may be queued before the
// coordinator starts: a start after a failed greeting must not run the sweep.
TEST(Coordinator, AStartAfterAFailedGreetingKeepsTheRanksError) {
  fixture f({1, 2});
  f.c->on_hello(hello(1, "n", "cpu"), 0);
  outbox failed =
      f.c->on_hello(hello(2, "n", "", "given backend 'cuda' by the rank map (runtime.ranks), but no CUDA device"), 0);
  EXPECT_EQ(failed.stops, (std::vector<int>{1, 2}));
  outbox late = f.c->start(0);
  EXPECT_FALSE(late.checkpoint.has_value());
  EXPECT_TRUE(late.evaluations.empty() && late.synthesis.empty() && late.notices.empty());
  EXPECT_EQ(f.c->result().how, outcome::kind::failed);
  EXPECT_NE(f.c->result().failure.message.find("rank 2 (n): given backend 'cuda'"), std::string::npos)
      << f.c->result().failure.message;
}

}  // namespace
}  // namespace kevolve::sweep
