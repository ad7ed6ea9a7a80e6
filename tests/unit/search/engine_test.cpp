// The search engine with a scripted evaluator: policies, memory modes, stop
// rules, determinism, failed nodes, evaluations in flight.
#include <algorithm>
#include <cmath>
#include <deque>

#include <gtest/gtest.h>

#include "scripted_evaluator.h"

namespace kevolve::search {
namespace {

using testing::run_search;
using testing::scripted_evaluator;
using testing::scripted_verdict;

search_config base_config(const std::string& policy) {
  search_config c;
  c.policy.name = policy;
  c.stop.max_evaluations = 40;
  c.seed = 7;
  return c;
}

search_engine make(const search_config& c) {
  auto e = search_engine::create(c);
  EXPECT_TRUE(e.has_value()) << (e ? "" : e.error().message);
  return std::move(*e);
}

// A landscape: a child is 10% better than its parent when it inherits or
// compares, merges add the best other's gain, resets start at 1; every fifth
// candidate does not compile.
scripted_verdict landscape(const tree& t, const expansion& e) {
  if (e.child % 5 == 0) return {eval::status::compile_failed, 0.0, "error: expected ';'"};
  double f = 1.0;
  if (e.parent != kRoot) f = std::max(1.0, t.at(e.parent).fitness) * 1.1;
  if (e.mode == memory_mode::merge && e.context.size() > 1) f += 0.05 * t.at(e.context[1]).fitness;
  return {eval::status::ok, f, ""};
}

std::string fingerprint(const tree& t) {
  std::string s;
  for (const node& n : t.nodes())
    s += std::to_string(n.id) + ":" + std::to_string(n.parent) + ":" + to_string(n.mode) + ":" +
         std::to_string(n.context.size()) + ":" + std::to_string(n.fitness) + ";";
  return s;
}

TEST(SearchEngine, SameSeedAndVerdictsGiveTheSameTree) {
  for (const char* policy : {"uct", "greedy", "tournament"}) {
    auto c = base_config(policy);
    search_engine a = make(c), b = make(c);
    scripted_evaluator ea(landscape), eb(landscape);
    run_search(a, ea);
    run_search(b, eb);
    EXPECT_EQ(fingerprint(a.nodes()), fingerprint(b.nodes())) << policy;
    EXPECT_EQ(a.random().state(), b.random().state()) << policy;
  }
}

TEST(SearchEngine, AnotherSeedGivesAnotherTree) {
  auto c = base_config("tournament");
  search_engine a = make(c);
  c.seed = 8;
  search_engine b = make(c);
  scripted_evaluator ea(landscape), eb(landscape);
  run_search(a, ea);
  run_search(b, eb);
  EXPECT_NE(fingerprint(a.nodes()), fingerprint(b.nodes()));
}

TEST(SearchEngine, FailedNodesStayWithTheirReasons) {
  auto c = base_config("uct");
  search_engine e = make(c);
  scripted_evaluator ev(landscape);
  run_search(e, ev);
  int failed = 0;
  for (const node& n : e.nodes().nodes())
    if (n.id != kRoot && n.result == eval::status::compile_failed) {
      ++failed;
      EXPECT_EQ(n.state, node_state::evaluated);
      EXPECT_EQ(n.fitness, 0.0);
      EXPECT_EQ(n.reason, "error: expected ';'");
      EXPECT_FALSE(n.code.empty());
    }
  EXPECT_GE(failed, 7);
  EXPECT_EQ(e.nodes().size(), 41u);  // the root and 40 evaluated candidates
}

TEST(SearchEngine, GreedyGrowsFromTheBestSoFar) {
  auto c = base_config("greedy");
  c.policy.fresh_probability = 0.0;
  c.memory.mode = "inherit";
  c.max_in_flight = 1;
  search_engine e = make(c);
  scripted_evaluator ev(landscape);
  double now = 0;
  for (int i = 0; i < 30; ++i) {
    const node_id best_before = e.best();
    auto x = e.next(now);
    ASSERT_TRUE(x.has_value());
    EXPECT_EQ(x->parent, best_before == kNoNode ? kRoot : best_before) << "expansion " << i;
    const auto v = ev.judge(e.nodes(), *x);
    e.record(x->child, v.result, v.fitness, v.reason, ++now);
  }
  // Every correct child beat its parent, so the best is deep in one line.
  EXPECT_GE(e.nodes().at(e.best()).depth, 15);
}

TEST(SearchEngine, TournamentPicksTheFittestContestant) {
  auto c = base_config("tournament");
  c.policy.fresh_probability = 0.0;
  c.policy.tournament_size = 64;  // larger than the population: always the best
  c.max_in_flight = 1;
  search_engine e = make(c);
  scripted_evaluator ev(landscape);
  double now = 0;
  for (int i = 0; i < 20; ++i) {
    const node_id best_before = e.best();
    auto x = e.next(now);
    ASSERT_TRUE(x.has_value());
    if (best_before != kNoNode && x->mode != memory_mode::reset) {
      EXPECT_EQ(e.nodes().at(x->parent).fitness, e.nodes().at(best_before).fitness);
    }
    const auto v = ev.judge(e.nodes(), *x);
    e.record(x->child, v.result, v.fitness, v.reason, ++now);
  }
}

TEST(SearchEngine, UctSpendsMoreOnTheBetterSubtree) {
  auto c = base_config("uct");
  c.stop.max_evaluations = 120;
  c.memory.mode = "inherit";
  c.max_in_flight = 1;
  search_engine e = make(c);
  // The first fresh sample is a good lineage; later fresh samples are poor.
  scripted_evaluator ev([](const tree& t, const expansion& x) -> scripted_verdict {
    const node_id top = x.parent == kRoot ? x.child : t.path(x.parent).front();
    return {eval::status::ok, top == 1 ? 3.0 : 0.2, ""};
  });
  run_search(e, ev);
  int under_first = 0, elsewhere = 0;
  for (const node& n : e.nodes().nodes()) {
    if (n.id == kRoot) continue;
    (e.nodes().path(n.id).front() == 1 ? under_first : elsewhere)++;
  }
  EXPECT_GT(under_first, 2 * elsewhere) << under_first << " vs " << elsewhere;
  EXPECT_EQ(e.nodes().path(e.best()).front(), 1);
  EXPECT_GE(e.nodes().at(kRoot).children.size(), 3u);  // progressive widening still explores
}

TEST(SearchEngine, MemoryModesShowTheRightContext) {
  auto c = base_config("greedy");
  c.policy.fresh_probability = 0.0;
  c.max_in_flight = 1;
  for (const char* mode : {"inherit", "compare_siblings", "merge", "reset"}) {
    c.memory.mode = mode;
    search_engine e = make(c);
    scripted_evaluator ev([](const tree&, const expansion& x) -> scripted_verdict {
      return {eval::status::ok, 1.0 + 0.01 * double(x.child), ""};
    });
    double now = 0;
    for (int i = 0; i < 12; ++i) {
      auto x = e.next(now);
      ASSERT_TRUE(x.has_value());
      const tree& t = e.nodes();
      const std::string m = mode;
      if (x->parent == kRoot) {
        EXPECT_TRUE(x->context.empty()) << m;
      } else if (m == "inherit") {
        // The parent first, then its ancestors nearest first: the most
        // recent max_context steps of its line.
        auto line = t.path(x->parent);
        std::reverse(line.begin(), line.end());
        if (line.size() > size_t(c.memory.max_context)) line.resize(size_t(c.memory.max_context));
        ASSERT_FALSE(x->context.empty());
        EXPECT_EQ(x->context.front(), x->parent) << m;
        EXPECT_EQ(x->context, line) << m;
      } else if (m == "compare_siblings") {
        ASSERT_FALSE(x->context.empty());
        EXPECT_EQ(x->context.front(), x->parent);
        for (size_t k = 1; k < x->context.size(); ++k) EXPECT_EQ(t.at(x->context[k]).parent, x->parent) << m;
      } else if (m == "merge") {
        ASSERT_FALSE(x->context.empty());
        EXPECT_EQ(x->context.front(), x->parent);
        const auto line = t.path(x->parent);
        for (size_t k = 1; k < x->context.size(); ++k)
          EXPECT_EQ(std::count(line.begin(), line.end(), x->context[k]), 0) << "merge partner on the parent's own line";
      }
      if (m == "reset") {
        EXPECT_EQ(x->parent, kRoot);
      }
      EXPECT_EQ(e.nodes().at(x->child).mode, x->parent == kRoot ? memory_mode::reset : x->mode);
      const auto v = ev.judge(e.nodes(), *x);
      e.record(x->child, v.result, v.fitness, v.reason, ++now);
    }
  }
}

TEST(SearchEngine, AdaptiveMemoryRepairsFailedParentsFromTheirTrajectory) {
  auto c = base_config("tournament");
  c.stop.max_evaluations = 80;
  search_engine e = make(c);
  scripted_evaluator ev(landscape);
  run_search(e, ev);
  int modes[4] = {0, 0, 0, 0};
  for (const node& n : e.nodes().nodes()) {
    if (n.id == kRoot) continue;
    ++modes[int(n.mode)];
    if (n.parent != kRoot && !e.nodes().at(n.parent).ok()) {
      EXPECT_EQ(n.mode, memory_mode::inherit) << n.id;
    }
  }
  EXPECT_GT(modes[int(memory_mode::inherit)], 0);
  EXPECT_GT(modes[int(memory_mode::compare_siblings)] + modes[int(memory_mode::merge)], 0);
  EXPECT_GT(modes[int(memory_mode::reset)], 0);
}

TEST(SearchEngine, StopsAtTheTargetFitness) {
  auto c = base_config("greedy");
  c.stop = {};
  c.stop.target_fitness = 2.0;
  search_engine e = make(c);
  scripted_evaluator ev(landscape);
  run_search(e, ev);
  EXPECT_GE(e.nodes().at(e.best()).fitness, 2.0);
  EXPECT_NE(e.stopped(1e9).find("target fitness"), std::string::npos);
  EXPECT_LT(e.nodes().size(), 40u);
}

TEST(SearchEngine, NeverHandsOutMoreThanTheEvaluationBudget) {
  auto c = base_config("uct");
  c.stop.max_evaluations = 13;
  c.max_in_flight = 4;
  search_engine e = make(c);
  scripted_evaluator ev(landscape);
  const auto handed = run_search(e, ev);
  EXPECT_EQ(handed.size(), 13u);
  EXPECT_EQ(e.progress(0).evaluations, 13);
  EXPECT_NE(e.stopped(0).find("evaluation budget"), std::string::npos);
}

TEST(SearchEngine, StopsWhenTheWallTimeIsSpent) {
  auto c = base_config("uct");
  c.stop = {};
  c.stop.max_seconds = 10.0;  // run_search advances one second per verdict
  search_engine e = make(c);
  scripted_evaluator ev(landscape);
  run_search(e, ev);
  EXPECT_GE(e.progress(0).evaluations, 10);
  EXPECT_LE(e.progress(0).evaluations, 10 + c.max_in_flight);
  EXPECT_FALSE(e.next(10.0).has_value());
}

TEST(SearchEngine, StopsAfterStagnation) {
  auto c = base_config("greedy");
  c.stop = {};
  c.stop.stagnation = 6;
  c.max_in_flight = 1;
  search_engine e = make(c);
  // Two good candidates, then nothing better.
  scripted_evaluator ev(std::vector<scripted_verdict>{{eval::status::ok, 1.5, ""}, {eval::status::ok, 2.0, ""}});
  run_search(e, ev);
  EXPECT_EQ(e.progress(0).evaluations, 2 + 6);
  EXPECT_NE(e.stopped(0).find("no improvement"), std::string::npos);
}

TEST(SearchEngine, ManyEvaluationsInFlight) {
  auto c = base_config("uct");
  c.max_in_flight = 5;
  search_engine e = make(c);
  std::vector<expansion> out;
  while (auto x = e.next(0)) out.push_back(*x);
  EXPECT_EQ(out.size(), 5u);
  EXPECT_EQ(e.in_flight(), 5);
  for (size_t i = 1; i < out.size(); ++i) EXPECT_NE(out[i].child, out[i - 1].child);
  // A verdict that arrives before an earlier child's is held: it reaches the
  // tree after that one, so nothing is handed out yet.
  e.record(out[2].child, eval::status::ok, 1.2, "", 1);
  EXPECT_EQ(e.in_flight(), 5);
  EXPECT_EQ(e.held(), 1);
  EXPECT_EQ(e.nodes().at(out[2].child).state, node_state::pending);
  EXPECT_FALSE(e.next(1).has_value());
  e.record(out[0].child, eval::status::ok, 1.1, "", 2);
  EXPECT_EQ(e.in_flight(), 4);
  EXPECT_EQ(e.nodes().at(out[0].child).state, node_state::evaluated);
  EXPECT_TRUE(e.next(2).has_value());
}

// Verdicts of children in flight arriving in any order, and the caller asking
// for the next child early or late, grow the same tree: child k is chosen from
// exactly the first k - max_in_flight verdicts.
TEST(SearchEngine, TheOrderVerdictsArriveInDoesNotChangeTheTree) {
  for (const char* policy : {"uct", "greedy", "tournament"})
    for (int in_flight : {1, 2, 4}) {
      auto c = base_config(policy);
      c.max_in_flight = in_flight;
      std::vector<std::string> trees;
      for (uint64_t arrival : {0u, 1u, 2u, 3u}) {
        search_engine e = make(c);
        rng order(arrival);
        std::vector<expansion> pending;
        double now = 0;
        for (int step = 0; step < 1000 && !e.finished(now); ++step) {
          // Arrival 0: in order, the next child asked for after every verdict;
          // the others: a random verdict in flight, the caller sometimes late.
          if (arrival == 0 || order.uniform() < 0.7)
            while (auto x = e.next(now)) pending.push_back(*x);
          if (pending.empty()) continue;
          const size_t i = arrival == 0 ? 0 : size_t(order.uniform() * double(pending.size())) % pending.size();
          const expansion x = pending[i];
          pending.erase(pending.begin() + long(i));
          const auto v = landscape(e.nodes(), x);
          e.record(x.child, v.result, v.fitness, v.reason, ++now);
        }
        EXPECT_TRUE(e.finished(now)) << policy << " " << in_flight;
        EXPECT_EQ(e.held(), 0);
        EXPECT_EQ(e.progress(0).evaluations, c.stop.max_evaluations);
        trees.push_back(fingerprint(e.nodes()));
      }
      for (size_t i = 1; i < trees.size(); ++i) EXPECT_EQ(trees[0], trees[i]) << policy << ", " << in_flight << " in flight, arrival " << i;
    }
}

// A checkpoint keeps held verdicts: the snapshot has them applied.
TEST(SearchEngine, ASnapshotKeepsHeldVerdicts) {
  auto c = base_config("greedy");
  c.max_in_flight = 3;
  search_engine e = make(c);
  std::vector<expansion> out;
  while (auto x = e.next(0)) out.push_back(*x);
  e.record(out[1].child, eval::status::ok, 2.0, "", 1);
  e.record(out[2].child, eval::status::wrong_result, 0.0, "mismatch", 2);
  ASSERT_EQ(e.held(), 2);
  auto restored = search_engine::restore(c, e.save());
  ASSERT_TRUE(restored.has_value()) << restored.error().message;
  EXPECT_EQ(restored->pending_nodes(), std::vector<node_id>{out[0].child});
  EXPECT_EQ(restored->nodes().at(out[1].child).fitness, 2.0);
  EXPECT_EQ(restored->nodes().at(out[2].child).reason, "mismatch");
  EXPECT_EQ(restored->progress(0).evaluations, 2);
  EXPECT_EQ(restored->progress(0).best_fitness, 2.0);
}

TEST(SearchEngine, BadConfigNamesTheKey) {
  auto c = base_config("annealing");
  auto e = search_engine::create(c);
  ASSERT_FALSE(e.has_value());
  EXPECT_NE(e.error().message.find("'search.policy'"), std::string::npos);
  c = base_config("uct");
  c.memory.mode = "forget";
  e = search_engine::create(c);
  ASSERT_FALSE(e.has_value());
  EXPECT_NE(e.error().message.find("'search.memory'"), std::string::npos);
  c = base_config("uct");
  c.stop = {};
  EXPECT_FALSE(search_engine::create(c).has_value());
}

}  // namespace
}  // namespace kevolve::search

namespace kevolve::search {
namespace {

TEST(SearchEngine, RestoredEngineContinuesExactlyAndReissuesPendingWork) {
  auto c = base_config("tournament");
  c.max_in_flight = 3;
  search_engine part = make(c);
  scripted_evaluator ev(landscape);

  // Run part way, leaving expansions in flight.
  double now = 0;
  std::deque<expansion> pending;
  for (int i = 0; i < 15; ++i) {
    while (auto x = part.next(now)) pending.push_back(*x);
    const expansion x = pending.front();
    pending.pop_front();
    const auto v = ev.judge(part.nodes(), x);
    part.record(x.child, v.result, v.fitness, v.reason, ++now);
  }
  while (auto x = part.next(now)) pending.push_back(*x);
  auto resumed = search_engine::restore(c, part.save());
  ASSERT_TRUE(resumed.has_value()) << resumed.error().message;
  ASSERT_EQ(resumed->pending_nodes().size(), pending.size());
  EXPECT_EQ(resumed->in_flight(), int(pending.size()));

  // The interrupted engine and the restored one, fed the same verdicts for the
  // re-issued work and then run to the end, grow the same tree.
  for (search_engine* e : {&part, &*resumed}) {
    double t = now;
    for (const expansion& x : pending) {
      const auto v = landscape(e->nodes(), x);
      e->record(x.child, v.result, v.fitness, v.reason, ++t);
    }
    scripted_evaluator rest(landscape);
    run_search(*e, rest);
  }
  EXPECT_EQ(fingerprint(part.nodes()), fingerprint(resumed->nodes()));
  EXPECT_EQ(part.random().state(), resumed->random().state());
  EXPECT_EQ(resumed->progress(0).evaluations, c.stop.max_evaluations);
}

}  // namespace
}  // namespace kevolve::search
