// The whole runtime -- coordinator, bridges, rank actors, evaluators -- with
// three "ranks" in this process joined by the loopback transport, and an
// evaluation service that answers from the code alone. Shows without MPI and
// in seconds: every node evaluated exactly once across ranks, and a rank cut
// off mid-sweep retired with its work done by the other.
#include <gtest/gtest.h>

#include <atomic>
#include <fstream>
#include <thread>

#include "actors/runtime.h"
#include "common/fs.h"
#include "common/hash.h"
#include "store/hdf5_store.h"
#include "sweep/scheduler.h"
#include "transport/loopback.h"

namespace kevolve::actors {
namespace {

// Correct, with a fitness from the code's hash, after `ms` milliseconds.
class code_hash_service final : public sweep::evaluation_service {
 public:
  code_hash_service(int rank, std::atomic<int>& count, int ms) : rank_(rank), count_(count), ms_(ms) {}
  sweep::eval_result evaluate(const sweep::eval_request& r) override {
    std::this_thread::sleep_for(std::chrono::milliseconds(ms_));
    ++count_;
    sweep::eval_result out;
    out.id = r.id;
    out.rank = rank_;
    out.status = "ok";
    out.fitness = 1.0 + double(hash_bytes(r.code.data(), r.code.size()) % 100) / 100.0;
    out.baseline = "test";
    return out;
  }

 private:
  int rank_;
  std::atomic<int>& count_;
  int ms_;
};

struct loopback_sweep {
  temp_dir dir = *temp_dir::create("kevolve-loopback-");
  transport::loopback_network net{3};
  std::atomic<int> evaluations[3] = {};

  spec::sweep_spec spec() {
    const auto cfg = dir.path() / "sweep.yaml";
    std::ofstream(cfg) << "sweep:\n  operators: [" << KEVOLVE_TEST_SOURCE_DIR << "/tests/data/operators/ts_silu.yaml, "
                       << KEVOLVE_TEST_SOURCE_DIR << "/tests/data/operators/ts_softmax.yaml]\n  backends: [cpu]\n"
                       << "search:\n  policy: greedy\n  max_in_flight: 2\n  stop: {max_evaluations: 12}\n"
                       << "runtime: {heartbeat_seconds: 0.1, silence_seconds: 1, hello_seconds: 2, deadline_seconds: 30}\n";
    auto s = spec::load_sweep(cfg);
    EXPECT_TRUE(s.has_value()) << s.error().message;
    return *s;
  }

  sweep::outcome run(const std::function<void()>& meanwhile) {
    const spec::sweep_spec s = spec();
    service_factory make = [this](int rank, const std::string&) {
      return std::make_shared<code_hash_service>(rank, evaluations[rank], 20);
    };
    std::vector<std::thread> ranks;
    for (int r = 1; r < 3; ++r)
      ranks.emplace_back([&, r] {
        evaluator_run e;
        e.link = &net.endpoint(r);
        e.spec = &s;
        e.make_service = make;
        run_evaluator_rank(e);
      });
    sweep::run_options o;
    o.store = dir.path() / "s.h5";
    auto sched = sweep::scheduler::create(s, o);
    EXPECT_TRUE(sched.has_value());
    coordinator_run c;
    c.scheduler = std::move(*sched);
    c.link = &net.endpoint(0);
    c.make_service = make;
    std::thread side(meanwhile);
    auto result = run_coordinator(std::move(c));
    side.join();
    for (auto& t : ranks) t.join();
    EXPECT_TRUE(result.has_value());
    return *result;
  }
};

void expect_every_node_once(const store::sweep_record& r, int per_task) {
  for (const auto& t : r.tasks) {
    EXPECT_FALSE(t.stop_reason.empty()) << t.id;
    int evaluated = 0;
    for (const auto& n : t.search.nodes.nodes()) {
      if (n.id == 0) continue;
      EXPECT_EQ(n.state, search::node_state::evaluated) << t.id << " node " << n.id;
      EXPECT_TRUE(n.rank == 1 || n.rank == 2) << t.id << " node " << n.id << " rank " << n.rank;
      ++evaluated;
    }
    EXPECT_EQ(evaluated, per_task) << t.id;
  }
}

TEST(LoopbackRuntime, TwoRanksShareTheWorkAndEveryNodeIsEvaluatedOnce) {
  loopback_sweep s;
  const sweep::outcome out = s.run([] {});
  EXPECT_EQ(out.how, sweep::outcome::kind::completed);
  EXPECT_TRUE(out.finalize);
  expect_every_node_once(out.record, 12);
  EXPECT_GT(s.evaluations[1].load(), 0);
  EXPECT_GT(s.evaluations[2].load(), 0);
  EXPECT_EQ(s.evaluations[1] + s.evaluations[2], 24);  // no request evaluated twice
  auto stored = store::read_store(s.dir.path() / "s.h5");
  ASSERT_TRUE(stored.has_value());
  ASSERT_EQ(stored->ranks.size(), 2u);
  EXPECT_EQ(stored->ranks[0].evaluations + stored->ranks[1].evaluations, 24);
}

TEST(LoopbackRuntime, ARankCutOffMidSweepIsRetiredAndNothingIsLost) {
  loopback_sweep s;
  const sweep::outcome out = s.run([&s] {
    while (s.evaluations[2] < 3) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    s.net.cut(2);
  });
  EXPECT_EQ(out.how, sweep::outcome::kind::completed);
  EXPECT_FALSE(out.finalize);  // a rank did not say bye: nobody waits for it in MPI_Finalize
  expect_every_node_once(out.record, 12);
  bool retired = false;
  for (const auto& r : out.record.ranks) retired |= r.rank == 2 && r.state == "retired";
  EXPECT_TRUE(retired);
}

}  // namespace
}  // namespace kevolve::actors
