// kevolve status: tasks done, running and pending, best so far, ranks, and
// the time left from seconds per evaluation and the stop rules.
#include "report/status.h"

#include <gtest/gtest.h>

#include "search/engine.h"

namespace kevolve::report {
namespace {

// evaluated children with fitness 1+i, then `pending` children without a verdict.
store::task_record task(const std::string& id, int evaluated, int pending, double seconds, const std::string& stop) {
  search::search_config c;
  c.policy.name = "greedy";
  c.max_in_flight = 8;
  c.stop.max_evaluations = 100;
  auto e = search::search_engine::create(c);
  EXPECT_TRUE(e.has_value());
  for (int i = 0; i < evaluated + pending; ++i) {
    auto x = e->next(double(i));
    EXPECT_TRUE(x.has_value());
    e->set_code(x->child, "builtin", "k");
    if (i < evaluated) e->record(x->child, i == 1 ? eval::status::wrong_result : eval::status::ok, i == 1 ? 0.0 : 1.0 + i, "", i + 0.5, 1);
  }
  store::task_record t;
  t.id = id;
  t.stop_reason = stop;
  t.seconds_spent = seconds;
  t.search = e->save();
  return t;
}

store::sweep_record sweep() {
  store::sweep_record r;
  r.kevolve_version = "test";
  r.created_at = "2024-05-01T10:00:00Z";
  r.tasks = {task("a/fp32/cpu", 4, 0, 8.0, "max_evaluations"), task("b/fp32/cpu", 2, 1, 10.0, ""),
             task("c/fp32/cpu", 0, 0, 0.0, "")};
  for (int rank : {1, 2, 3}) {
    store::rank_record k;
    k.session = 1;
    k.rank = rank;
    k.state = rank == 3 ? "retired" : "active";
    k.uptime_seconds = 20;
    k.busy_seconds = 10;
    r.ranks.push_back(k);
  }
  store::rank_record old;  // an earlier session: not shown
  old.session = 0;
  old.rank = 7;
  r.ranks.push_back(old);
  return r;
}

TEST(Status, CountsTasksVerdictsAndPendingNodes) {
  search::stop_config stop;
  stop.max_evaluations = 4;
  const auto s = compute_status(sweep(), stop);
  EXPECT_EQ(s.done, 1);
  EXPECT_EQ(s.running, 1);
  EXPECT_EQ(s.pending, 1);
  EXPECT_EQ(s.evaluations, 6);
  EXPECT_EQ(s.pending_nodes, 1);
  EXPECT_EQ(s.by_status.at("ok"), 4);
  EXPECT_EQ(s.by_status.at("wrong_result"), 2);
  EXPECT_EQ(s.tasks[0].best_node, 4);  // fitness 1+3
  EXPECT_DOUBLE_EQ(s.tasks[0].best_speedup, 4.0);
  EXPECT_EQ(s.session, 1);
  EXPECT_EQ(s.ranks.size(), 3u);
  EXPECT_EQ(s.parallel, 2);  // rank 3 is retired
}

TEST(Status, TimeLeftComesFromSecondsPerEvaluationAndTheStopRules) {
  search::stop_config stop;
  stop.max_evaluations = 4;
  auto s = compute_status(sweep(), stop);
  // b: 2 left at its own 5 s each; c: 4 left at the sweep's (8+10)/6 = 3 s; over 2 ranks.
  EXPECT_DOUBLE_EQ(s.tasks[1].seconds_left, 10.0);
  EXPECT_DOUBLE_EQ(s.tasks[2].seconds_left, 12.0);
  EXPECT_DOUBLE_EQ(s.seconds_left, 11.0);
  stop.max_seconds = 11;  // caps b at 1 s left, c at 11 s
  s = compute_status(sweep(), stop);
  EXPECT_DOUBLE_EQ(s.tasks[1].seconds_left, 1.0);
  EXPECT_DOUBLE_EQ(s.seconds_left, 6.0);
  s = compute_status(sweep(), search::stop_config{});  // stagnation alone: unknown
  EXPECT_LT(s.seconds_left, 0.0);
}

TEST(Status, TextSaysWhatADeveloperNeeds) {
  search::stop_config stop;
  stop.max_evaluations = 4;
  const auto r = sweep();
  const std::string text = status_text(compute_status(r, stop), r, "runs/s.h5", 12);
  for (const char* want : {"tasks: 1 done, 1 running, 1 pending (3 in all)", "evaluations: 6 (ok 4, wrong_result 2)",
                           "pending nodes (written, not yet evaluated): 1", "last checkpoint written 12 s ago",
                           "best so far: a/fp32/cpu at 4.000x", "evaluator ranks of session 1", "retired",
                           "estimated time left: about 11 s", "kevolve report runs/s.h5 --html"})
    EXPECT_NE(text.find(want), std::string::npos) << want << "\n" << text;
  EXPECT_EQ(text.find("rank 7"), std::string::npos);
}

TEST(Status, DurationsReadNaturally) {
  EXPECT_EQ(duration_text(45), "45 s");
  EXPECT_EQ(duration_text(200), "3 min 20 s");
  EXPECT_EQ(duration_text(7500), "2 h 05 min");
  EXPECT_EQ(duration_text(-1), "unknown");
}

}  // namespace
}  // namespace kevolve::report
