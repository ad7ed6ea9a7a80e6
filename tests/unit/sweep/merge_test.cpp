// kevolve merge's core: the tasks of split pieces combine into one store;
// duplicate tasks and pieces of different sweeps are refused by name.
#include "sweep/merge.h"

#include <gtest/gtest.h>

#include "common/fs.h"
#include "search/engine.h"
#include "spec/sweep_yaml.h"
#include "store/hdf5_store.h"

namespace kevolve::sweep {
namespace {

std::string config(const std::string& ops, const std::string& stop = "3", const std::string& checkpoint = "30") {
  return "sweep:\n  operators: [" + ops + "]\n  backends: [cpu]\n  seed: 7\nsearch:\n  policy: greedy\n  stop: {max_evaluations: " +
         stop + "}\ncheckpoint:\n  every_seconds: " + checkpoint + "\n";
}

// A task whose tree has `evaluations` evaluated children (grown by the real engine).
store::task_record task(const std::string& op, int evaluations) {
  search::search_config c;
  c.policy.name = "greedy";
  c.max_in_flight = 1;
  c.stop.max_evaluations = 100;
  auto e = search::search_engine::create(c);
  EXPECT_TRUE(e.has_value());
  for (int i = 0; i < evaluations; ++i) {
    auto x = e->next(double(i));
    EXPECT_TRUE(x.has_value());
    e->set_code(x->child, "builtin", "// " + op + " " + std::to_string(i));
    e->record(x->child, eval::status::ok, 1.0 + i, "", double(i) + 0.5, 1);
  }
  store::task_record t;
  t.op = op;
  t.variant = "fp32";
  t.backend = "cpu";
  t.id = op + "/fp32/cpu";
  t.stop_reason = "max_evaluations";
  t.search = e->save();
  return t;
}

merge_piece piece(const std::string& name, const std::string& yaml, std::vector<store::task_record> tasks,
                  int sessions, const std::string& created) {
  merge_piece p;
  p.name = name;
  p.record.kevolve_version = "test";
  p.record.config_yaml = yaml;
  p.record.config_hash = "h-" + name;
  p.record.created_at = created;
  p.record.tasks = std::move(tasks);
  for (int s = 0; s < sessions; ++s) {
    store::rank_record r;
    r.session = s;
    r.rank = 1;
    r.host = "n" + name;
    r.backend = "cpu";
    r.evaluations = 2;
    p.record.ranks.push_back(r);
  }
  return p;
}

TEST(Merge, PiecesCombineInOrderWithTheirRanksAndReadBack) {
  std::vector<merge_piece> pieces = {
      piece("a.h5", config("softmax"), {task("softmax", 3)}, 2, "2024-05-02T10:00:00Z"),
      piece("b.h5", config("layernorm, rmsnorm"), {task("layernorm", 2), task("rmsnorm", 3)}, 1, "2024-05-01T10:00:00Z")};
  auto m = merge_records(pieces);
  ASSERT_TRUE(m.has_value()) << m.error().message;
  ASSERT_EQ(m->tasks.size(), 3u);
  EXPECT_EQ(m->tasks[0].id, "softmax/fp32/cpu");
  EXPECT_EQ(m->tasks[1].id, "layernorm/fp32/cpu");
  EXPECT_EQ(m->tasks[2].id, "rmsnorm/fp32/cpu");
  EXPECT_EQ(m->tasks[1].search.nodes.size(), 3u);  // root + 2 evaluated
  EXPECT_EQ(m->created_at, "2024-05-01T10:00:00Z");
  // a.h5 had sessions 0 and 1, b.h5's session 0 follows them.
  ASSERT_EQ(m->ranks.size(), 3u);
  EXPECT_EQ(m->ranks[0].session, 0);
  EXPECT_EQ(m->ranks[1].session, 1);
  EXPECT_EQ(m->ranks[2].session, 2);
  EXPECT_EQ(m->ranks[2].host, "nb.h5");
  auto flat = spec::flatten_sweep_yaml(m->config_yaml, "merged");
  ASSERT_TRUE(flat.has_value()) << flat.error().message;
  EXPECT_EQ((*flat)["sweep.operators[0]"], "softmax");
  EXPECT_EQ((*flat)["sweep.operators[1]"], "layernorm");
  EXPECT_EQ((*flat)["sweep.operators[2]"], "rmsnorm");
  EXPECT_EQ(flat->count("sweep.operators[3]"), 0u);
  EXPECT_EQ((*flat)["search.stop.max_evaluations"], "3");
  EXPECT_NE(m->config_yaml.find("merged by kevolve merge from:"), std::string::npos);

  auto dir = temp_dir::create("kevolve-merge-test-");
  ASSERT_TRUE(dir.has_value());
  const auto out = dir->path() / "merged.h5";
  ASSERT_TRUE(store::write_store(out, *m).has_value());
  auto back = store::read_store(out);
  ASSERT_TRUE(back.has_value()) << back.error().message;
  ASSERT_EQ(back->tasks.size(), 3u);
  EXPECT_EQ(back->tasks[2].search.nodes.at(3).code, "// rmsnorm 2");
  EXPECT_EQ(back->ranks.size(), 3u);
}

TEST(Merge, ADuplicateTaskIsRefusedNamingBothStores) {
  auto m = merge_records({piece("a.h5", config("softmax"), {task("softmax", 1)}, 1, "x"),
                          piece("b.h5", config("softmax, rmsnorm"), {task("rmsnorm", 1), task("softmax", 2)}, 1, "x")});
  ASSERT_FALSE(m.has_value());
  EXPECT_NE(m.error().message.find("task 'softmax/fp32/cpu' is in a.h5 and in b.h5"), std::string::npos) << m.error().message;
  auto twice = merge_records({piece("a.h5", config("softmax"), {task("softmax", 1), task("softmax", 1)}, 1, "x")});
  ASSERT_FALSE(twice.has_value());
  EXPECT_NE(twice.error().message.find("is in a.h5 twice"), std::string::npos) << twice.error().message;
}

TEST(Merge, PiecesOfDifferentSweepsAreRefusedNamingTheKey) {
  auto m = merge_records({piece("a.h5", config("softmax", "3"), {task("softmax", 1)}, 1, "x"),
                          piece("b.h5", config("rmsnorm", "5"), {task("rmsnorm", 1)}, 1, "x")});
  ASSERT_FALSE(m.has_value());
  EXPECT_EQ(m.error().code, errc::invalid_input);
  EXPECT_NE(m.error().message.find("'search.stop.max_evaluations' is 5 in b.h5 but 3 in a.h5"), std::string::npos)
      << m.error().message;
}

TEST(Merge, PiecesMayDifferInCheckpointAndRuntime) {
  auto m = merge_records({piece("a.h5", config("softmax", "3", "30"), {task("softmax", 1)}, 1, "x"),
                          piece("b.h5", config("rmsnorm", "3", "5") + "runtime: {grace_seconds: 20}\n", {task("rmsnorm", 1)}, 1, "x")});
  EXPECT_TRUE(m.has_value()) << m.error().message;
}

TEST(Merge, NothingToMergeAndABadConfigAreRefused) {
  EXPECT_FALSE(merge_records({}).has_value());
  auto m = merge_records({piece("a.h5", "sweep: [unclosed", {task("softmax", 1)}, 1, "x")});
  ASSERT_FALSE(m.has_value());
  EXPECT_NE(m.error().message.find("a.h5 (its config_yaml)"), std::string::npos) << m.error().message;
}

}  // namespace
}  // namespace kevolve::sweep
