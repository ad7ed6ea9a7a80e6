#include "sweep/dispatcher.h"

#include <gtest/gtest.h>

namespace kevolve::sweep {
namespace {

eval_request request(uint64_t id, const std::string& task = "t/fp32/cpu") {
  eval_request r;
  r.id = id;
  r.task_id = task;
  r.backend = "cpu";
  r.node = int64_t(id);
  return r;
}

dispatcher two_ranks(double deadline = 10, double silence = 5) {
  dispatcher d({2, deadline, silence});
  d.add_evaluator(1, "cpu", "a", 0);
  d.add_evaluator(2, "cpu", "b", 0);
  return d;
}

TEST(Dispatcher, FillsEveryRankToItsQueueDepth) {
  dispatcher d = two_ranks();
  EXPECT_EQ(d.wanted("cpu"), 4);
  for (uint64_t i = 1; i <= 5; ++i) d.enqueue(request(i));
  EXPECT_EQ(d.wanted("cpu"), -1);
  auto sent = d.assign(0);
  ASSERT_EQ(sent.size(), 4u);
  EXPECT_EQ(d.ready("cpu"), 1u);
  EXPECT_EQ(d.held(), 4u);
  EXPECT_TRUE(d.assign(0).empty());  // nobody has room
  ASSERT_TRUE(d.complete(sent[0].first, sent[0].second.id, 1).has_value());
  auto more = d.assign(1);
  ASSERT_EQ(more.size(), 1u);
  EXPECT_EQ(more[0].first, sent[0].first);
}

TEST(Dispatcher, AnIdleRankIsServedBeforeABusyOneGetsItsSecondRequest) {
  dispatcher d = two_ranks();
  d.enqueue(request(1));
  d.enqueue(request(2));
  auto sent = d.assign(0);
  ASSERT_EQ(sent.size(), 2u);
  EXPECT_NE(sent[0].first, sent[1].first);  // one each, not two for rank 1
  d.complete(sent[0].first, sent[0].second.id, 1);
  d.enqueue(request(3));
  d.enqueue(request(4));
  auto next = d.assign(1);
  ASSERT_EQ(next.size(), 2u);
  EXPECT_EQ(next[0].first, sent[0].first);  // the rank with nothing left comes first
}

TEST(Dispatcher, PrefersTheTaskARankDidLast) {
  dispatcher d({1, 10, 5});
  d.add_evaluator(1, "cpu", "a", 0);
  d.enqueue(request(1, "softmax"));
  ASSERT_EQ(d.assign(0).size(), 1u);
  d.complete(1, 1, 1);
  d.enqueue(request(2, "gemm"));
  d.enqueue(request(3, "softmax"));
  auto next = d.assign(1);
  ASSERT_EQ(next.size(), 1u);
  EXPECT_EQ(next[0].second.task_id, "softmax");
}

TEST(Dispatcher, ALateRankIsSuspectAndItsWorkGoesElsewhereOnce) {
  dispatcher d({2, 10, 100});
  d.add_evaluator(1, "cpu", "a", 0);
  d.enqueue(request(1));
  d.enqueue(request(2));
  auto first = d.assign(0);  // rank 1, alone, takes both
  ASSERT_EQ(first.size(), 2u);
  EXPECT_EQ(first[1].first, 1);
  d.add_evaluator(2, "cpu", "b", 0);
  d.heard_from(1, 11);
  d.heard_from(2, 11);
  auto events = d.check(11);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].rank, 1);
  EXPECT_NE(events[0].what.find("deadline"), std::string::npos);
  EXPECT_EQ(d.ranks().at(1).state, "suspect");
  auto again = d.assign(11);  // both to rank 2, in the same order
  ASSERT_EQ(again.size(), 2u);
  EXPECT_EQ(again[0].first, 2);
  EXPECT_EQ(again[0].second.id, 1u);
  // The late rank answers first: its verdict counts and the rank is back.
  EXPECT_TRUE(d.complete(1, 1, 12).has_value());
  EXPECT_EQ(d.ranks().at(1).state, "active");
  // Rank 2's answer to the same request is a duplicate: dropped.
  EXPECT_FALSE(d.complete(2, 1, 13).has_value());
  EXPECT_TRUE(d.complete(2, 2, 14).has_value());
  EXPECT_EQ(d.outstanding(), 0u);
  EXPECT_EQ(d.ranks().at(1).deadline_misses, 1);
}

TEST(Dispatcher, ASilentRankIsRetiredForGood) {
  dispatcher d = two_ranks(100, 5);
  d.enqueue(request(1));
  auto sent = d.assign(0);
  ASSERT_EQ(sent[0].first, 1);
  d.heard_from(2, 6);
  auto events = d.check(6);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(d.ranks().at(1).state, "retired");
  EXPECT_TRUE(d.has_live("cpu"));
  auto again = d.assign(6);
  ASSERT_EQ(again.size(), 1u);
  EXPECT_EQ(again[0].first, 2);
  d.heard_from(1, 7);  // coming back does not bring work
  d.enqueue(request(2));
  d.enqueue(request(3));
  for (const auto& [rank, r] : d.assign(7)) EXPECT_EQ(rank, 2);
  d.retire(2);
  EXPECT_FALSE(d.has_live("cpu"));
}

}  // namespace
}  // namespace kevolve::sweep
