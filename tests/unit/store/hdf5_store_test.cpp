// The HDF5 store: exact round trips, resuming a search from a stored
// snapshot, and refusals of what is not a store of this schema.
#include "store/hdf5_store.h"

#include <fstream>
#include <random>

#include <gtest/gtest.h>

#include "common/fs.h"
#include "store_fixtures.h"

namespace kevolve::store {
namespace {

namespace fs = std::filesystem;
using namespace testing;

void write_ok(const fs::path& p, const sweep_record& r) {
  auto w = write_store(p, r);
  ASSERT_TRUE(w.has_value()) << w.error().message;
}

// Files in `dir` other than `keep`: no temporary file may stay behind.
std::vector<std::string> leftovers(const fs::path& dir, const std::string& keep) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().filename() != keep) out.push_back(e.path().filename().string());
  return out;
}

void expect_refused(const fs::path& p, errc code, std::initializer_list<std::string> parts) {
  auto r = read_store(p);
  ASSERT_FALSE(r.has_value()) << "a damaged store was accepted: " << p;
  EXPECT_EQ(r.error().code, code) << r.error().message;
  EXPECT_NE(r.error().message.find(p.string()), std::string::npos) << "the message must name the file: " << r.error().message;
  for (const std::string& part : parts)
    EXPECT_NE(r.error().message.find(part), std::string::npos) << "expected \"" << part << "\" in: " << r.error().message;
}

TEST(Hdf5Store, RoundTripGivesBackTheSameRecord) {
  const sweep_record r = make_record();
  // The record exercises what the store must keep.
  size_t pending = 0, failed = 0, with_nul = 0;
  for (const task_record& t : r.tasks)
    for (const search::node& n : t.search.nodes.nodes()) {
      pending += n.state == search::node_state::pending;
      failed += n.state == search::node_state::evaluated && n.result != eval::status::ok && n.id != 0;
      with_nul += n.code.find('\0') != std::string::npos;
    }
  ASSERT_EQ(r.tasks.size(), 2u);
  ASSERT_GE(r.tasks[0].search.nodes.size() + r.tasks[1].search.nodes.size(), 190u);
  ASSERT_GE(pending, 4u);
  ASSERT_GE(failed, 20u);
  ASSERT_GE(with_nul, 1u);

  temp_dir d = make_dir();
  const fs::path p = d.path() / "sweep.h5";
  write_ok(p, r);
  auto back = read_store(p);
  ASSERT_TRUE(back.has_value()) << back.error().message;
  EXPECT_EQ(diff_record(r, *back), "");
  EXPECT_EQ(back->tasks[1].stop_reason, "max_evaluations reached\n(70 of 70)");
  EXPECT_EQ(back->tasks[1].baseline, "");
  EXPECT_EQ(back->tasks[0].search.nodes.at(0).origin, "task");
  EXPECT_TRUE(leftovers(d.path(), "sweep.h5").empty());
}

TEST(Hdf5Store, RestoredEngineContinuesExactlyLikeTheOriginal) {
  grown_task g = grow_task("softmax", "uct", 3, 60);
  sweep_record r = make_record();
  r.tasks = {g.record};
  temp_dir d = make_dir();
  const fs::path p = d.path() / "sweep.h5";
  write_ok(p, r);
  auto back = read_store(p);
  ASSERT_TRUE(back.has_value()) << back.error().message;
  auto resumed = search_engine::restore(g.config, back->tasks[0].search);
  ASSERT_TRUE(resumed.has_value()) << resumed.error().message;
  ASSERT_EQ(resumed->pending_nodes(), g.engine.pending_nodes());
  ASSERT_FALSE(resumed->pending_nodes().empty());

  // Same verdicts for the re-issued work, then 40 more expansions each.
  double now = 1000.0;
  for (search_engine* e : {&g.engine, &*resumed}) {
    double t = now;
    for (node_id id : e->pending_nodes()) {
      const test_verdict v = verdict_for(id);
      e->record(id, v.result, v.fitness, v.reason, t += 1.0);
    }
    for (int i = 0; i < 40; ++i) {
      auto x = e->next(t);
      ASSERT_TRUE(x.has_value());
      e->set_code(x->child, "builtin", code_for(x->child));
      const test_verdict v = verdict_for(x->child);
      e->record(x->child, v.result, v.fitness, v.reason, t += 1.0);
    }
  }
  EXPECT_EQ(diff_snapshot(g.engine.save(), resumed->save()), "");
}

TEST(Hdf5Store, EmptyTablesAndNoTasksRoundTrip) {
  temp_dir d = make_dir();
  sweep_record r = make_record();
  r.tasks.clear();
  r.config_yaml = std::string(1 << 20, 'y') + "\n# end";  // a large string attribute
  write_ok(d.path() / "none.h5", r);
  auto back = read_store(d.path() / "none.h5");
  ASSERT_TRUE(back.has_value()) << back.error().message;
  EXPECT_EQ(diff_record(r, *back), "");

  task_record only_root;  // a task that has not started: the root, nothing else
  only_root.id = "relu/fp32/cpu";
  r.tasks = {only_root};
  r.config_yaml = "";
  write_ok(d.path() / "root.h5", r);
  back = read_store(d.path() / "root.h5");
  ASSERT_TRUE(back.has_value()) << back.error().message;
  EXPECT_EQ(diff_record(r, *back), "");
}

TEST(Hdf5Store, OverwriteReplacesTheStoreAndLeavesNoTemporaryFile) {
  temp_dir d = make_dir();
  const fs::path p = d.path() / "runs" / "a" / "sweep.h5";  // parent directories are created
  write_ok(p, make_big_record("first", 300, 256));
  const sweep_record second = make_record("second");
  write_ok(p, second);
  auto back = read_store(p);
  ASSERT_TRUE(back.has_value()) << back.error().message;
  EXPECT_EQ(diff_record(second, *back), "");
  EXPECT_TRUE(leftovers(p.parent_path(), "sweep.h5").empty());
}

TEST(Hdf5Store, CompressedTextRoundTrips) {
  temp_dir d = make_dir();
  const sweep_record r = make_big_record("deflate", 3000, 2048);
  store_options o;
  o.text_deflate = 1;
  ASSERT_TRUE(write_store(d.path() / "z.h5", r, o).has_value());
  ASSERT_TRUE(write_store(d.path() / "plain.h5", r).has_value());
  auto back = read_store(d.path() / "z.h5");
  ASSERT_TRUE(back.has_value()) << back.error().message;
  EXPECT_EQ(diff_record(r, *back), "");
  EXPECT_LT(fs::file_size(d.path() / "z.h5"), fs::file_size(d.path() / "plain.h5") / 2);
}

TEST(Hdf5Store, MissingFileIsNotFound) {
  temp_dir d = make_dir();
  expect_refused(d.path() / "nope.h5", errc::not_found, {"no such store file"});
  expect_refused(d.path(), errc::invalid_input, {"is a directory"});
}

TEST(Hdf5Store, OtherSchemaVersionIsRefusedWithFoundAndExpected) {
  temp_dir d = make_dir();
  const fs::path p = d.path() / "sweep.h5";
  write_ok(p, make_record());
  ASSERT_TRUE(store_set_int_attribute(p, "/", "schema_version", kSchemaVersion + 1).has_value());
  expect_refused(p, errc::invalid_input,
                 {"schema_version is " + std::to_string(kSchemaVersion + 1),
                  "expected " + std::to_string(kOldestReadableSchema) + " to " + std::to_string(kSchemaVersion)});

  sweep_record future = make_record();
  future.schema_version = kSchemaVersion + 1;
  auto w = write_store(d.path() / "future.h5", future);
  ASSERT_FALSE(w.has_value());
  EXPECT_EQ(w.error().code, errc::invalid_input);
  EXPECT_FALSE(fs::exists(d.path() / "future.h5"));
}

TEST(Hdf5Store, RandomBytesAreRefused) {
  temp_dir d = make_dir();
  const fs::path p = d.path() / "noise.h5";
  std::mt19937_64 g(42);
  std::string bytes(64 << 10, '\0');
  for (char& c : bytes) c = char(g());
  ASSERT_TRUE(write_file_atomic(p, bytes).has_value());
  expect_refused(p, errc::invalid_input, {"not an HDF5 file"});
  ASSERT_TRUE(write_file_atomic(p, "").has_value());
  expect_refused(p, errc::invalid_input, {"not an HDF5 file"});
}

TEST(Hdf5Store, TruncatedStoreIsRefused) {
  temp_dir d = make_dir();
  const fs::path p = d.path() / "sweep.h5";
  write_ok(p, make_record());
  auto whole = read_file(p);
  ASSERT_TRUE(whole.has_value());
  for (double fraction : {0.5, 0.9, 0.999}) {
    const fs::path cut = d.path() / "cut.h5";
    ASSERT_TRUE(write_file_atomic(cut, whole->substr(0, size_t(double(whole->size()) * fraction))).has_value());
    SCOPED_TRACE("truncated at " + std::to_string(fraction));
    expect_refused(cut, errc::invalid_input, {"truncated"});
  }
  const fs::path head = d.path() / "head.h5";  // the signature and a piece of the superblock
  ASSERT_TRUE(write_file_atomic(head, whole->substr(0, 12)).has_value());
  expect_refused(head, errc::invalid_input, {});
}

TEST(Hdf5Store, MissingDatasetIsRefusedAndNamed) {
  for (const char* name : {"nodes", "text", "context", "measurements"}) {
    temp_dir d = make_dir();
    const fs::path p = d.path() / "sweep.h5";
    write_ok(p, make_record());
    ASSERT_TRUE(store_remove_object(p, std::string("/tasks/1/") + name).has_value());
    SCOPED_TRACE(name);
    expect_refused(p, errc::invalid_input, {"/tasks/1", std::string("missing dataset '") + name + "'"});
  }
}

TEST(Hdf5Store, MissingGroupOrAttributeIsRefusedAndNamed) {
  temp_dir d = make_dir();
  const fs::path p = d.path() / "sweep.h5";
  write_ok(p, make_record());
  ASSERT_TRUE(store_remove_object(p, "/tasks/1").has_value());
  expect_refused(p, errc::invalid_input, {"missing group '1'"});

  struct attr_case {
    const char* object;
    const char* name;
  };
  for (attr_case c : {attr_case{"/", "schema_version"}, attr_case{"/", "config_hash"}, attr_case{"/", "task_count"},
                      attr_case{"/tasks/0", "rng_state"}, attr_case{"/tasks/0", "best_fitness"},
                      attr_case{"/tasks/1", "stop_reason"}}) {
    write_ok(p, make_record());
    ASSERT_TRUE(store_remove_attribute(p, c.object, c.name).has_value());
    SCOPED_TRACE(c.name);
    expect_refused(p, errc::invalid_input, {std::string("missing attribute '") + c.name + "'"});
  }
}

TEST(Hdf5Store, InconsistentRecordIsNotWritten) {
  temp_dir d = make_dir();
  const fs::path p = d.path() / "sweep.h5";
  sweep_record r = make_record();
  r.tasks[1].search.nodes.at(3).parent = 7;  // a parent after the node
  auto w = write_store(p, r);
  ASSERT_FALSE(w.has_value());
  EXPECT_EQ(w.error().code, errc::invalid_input);
  for (const char* part : {"task 1", "gemm_bias_relu/fp32/cpu", "node 3 has parent 7"})
    EXPECT_NE(w.error().message.find(part), std::string::npos) << w.error().message;

  r = make_record();
  r.tasks[0].search.nodes.at(5).context.push_back(100000);
  w = write_store(p, r);
  ASSERT_FALSE(w.has_value());
  EXPECT_NE(w.error().message.find("node 5 has context entry 100000"), std::string::npos) << w.error().message;

  r = make_record();
  r.config_yaml += std::string("\0", 1);  // attributes are C strings
  w = write_store(p, r);
  ASSERT_FALSE(w.has_value());
  EXPECT_NE(w.error().message.find("'config_yaml' contains a NUL byte"), std::string::npos) << w.error().message;

  r = make_record();
  r.tasks[0].measurements[0].node = -2;
  w = write_store(p, r);
  ASSERT_FALSE(w.has_value());
  EXPECT_NE(w.error().message.find("measurement 0 is of node -2"), std::string::npos) << w.error().message;
  EXPECT_FALSE(fs::exists(p));
  EXPECT_TRUE(leftovers(d.path(), "").empty());
}

TEST(Hdf5Store, FailedWriteNamesThePathAndRemovesTheTemporaryFile) {
  temp_dir d = make_dir();
  const fs::path p = d.path() / "sweep.h5";
  fs::create_directory(p);  // rename over a directory fails
  auto w = write_store(p, make_record());
  ASSERT_FALSE(w.has_value());
  EXPECT_EQ(w.error().code, errc::io_error);
  EXPECT_NE(w.error().message.find(p.string()), std::string::npos) << w.error().message;
  EXPECT_TRUE(leftovers(d.path(), "sweep.h5").empty());

  ASSERT_TRUE(write_file_atomic(d.path() / "file", "x").has_value());
  w = write_store(d.path() / "file" / "sweep.h5", make_record());  // parent is a file
  ASSERT_FALSE(w.has_value());
  EXPECT_EQ(w.error().code, errc::io_error);
  EXPECT_NE(w.error().message.find("file/sweep.h5"), std::string::npos) << w.error().message;
}

TEST(Hdf5Store, SkillNotesRoundTripAndBadRowsAreNamed) {
  temp_dir d = make_dir();
  const fs::path p = d.path() / "skills.h5";
  const sweep_record rec = make_record();
  ASSERT_EQ(rec.tasks[0].skills.size(), 2u);
  ASSERT_TRUE(write_store(p, rec).has_value());
  auto r = read_store(p);
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_EQ(diff_record(rec, *r), "");
  EXPECT_EQ(r->tasks[0].llm.back().purpose, "skill_note");
  ASSERT_TRUE(store_remove_object(p, "/tasks/0/skills_text").has_value());
  r = read_store(p);
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.error().message.find("/tasks/0: missing dataset 'skills_text'"), std::string::npos) << r.error().message;
  sweep_record bad = make_record();
  bad.tasks[0].skills[0].parent = bad.tasks[0].skills[0].node;  // not its parent
  auto w = write_store(d.path() / "bad.h5", bad);
  ASSERT_FALSE(w.has_value());
  EXPECT_NE(w.error().message.find("skill 0 is of node"), std::string::npos) << w.error().message;
  bad = make_record();
  bad.tasks[0].skills[1].exchange = 99;
  w = write_store(d.path() / "bad.h5", bad);
  ASSERT_FALSE(w.has_value());
  EXPECT_NE(w.error().message.find("skill 1 names llm exchange 99"), std::string::npos) << w.error().message;
  bad = make_record();
  bad.tasks[0].llm[0].purpose = "chat";
  w = write_store(d.path() / "bad.h5", bad);
  ASSERT_FALSE(w.has_value());
  EXPECT_NE(w.error().message.find("has purpose 'chat', expected kernel or skill_note"), std::string::npos)
      << w.error().message;
}

TEST(Hdf5Store, LlmExchangesRoundTripAndBadRowsAreNamed) {
  temp_dir d = make_dir();
  const fs::path p = d.path() / "llm.h5";
  const sweep_record rec = make_record();
  ASSERT_EQ(rec.tasks[0].llm.size(), 4u);
  ASSERT_TRUE(write_store(p, rec).has_value());
  auto r = read_store(p);
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_EQ(diff_record(rec, *r), "");
  // A v3 store missing its llm table is refused, naming it.
  ASSERT_TRUE(store_remove_object(p, "/tasks/0/llm").has_value());
  r = read_store(p);
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.error().message.find("/tasks/0: missing dataset 'llm'"), std::string::npos) << r.error().message;
  // A record whose exchange names no node of the task is not written.
  sweep_record bad = make_record();
  bad.tasks[0].llm[1].node = 100000;
  auto w = write_store(d.path() / "bad.h5", bad);
  ASSERT_FALSE(w.has_value());
  EXPECT_NE(w.error().message.find("llm exchange 1 is of node 100000, expected a node of the task"), std::string::npos)
      << w.error().message;
}

TEST(Hdf5Store, RankTableAndNodeRanksRoundTrip) {
  temp_dir d = make_dir();
  const fs::path p = d.path() / "sweep.h5";
  sweep_record rec = make_record();
  rec.tasks[0].search.nodes.at(1).rank = 7;
  rank_record k;
  k.session = 1;
  k.rank = 7;
  k.host = std::string(100, 'h');  // longer than the column: cut, not overflowing
  k.backend = "cpu";
  k.state = "retired";
  k.evaluations = 12;
  k.by_status = {{"ok", 9}, {"timeout", 2}, {"error", 1}};
  k.busy_seconds = 3.5;
  k.cpu_seconds = 0.25;
  rec.ranks.push_back(k);
  write_ok(p, rec);
  auto back = read_store(p);
  ASSERT_TRUE(back.has_value()) << back.error().message;
  EXPECT_EQ(back->tasks[0].search.nodes.at(1).rank, 7);
  ASSERT_EQ(back->ranks.size(), 1u);
  const rank_record& b = back->ranks[0];
  EXPECT_EQ(b.session, 1);
  EXPECT_EQ(b.host, std::string(63, 'h'));
  EXPECT_EQ(b.state, "retired");
  EXPECT_EQ(b.by_status, k.by_status);
  EXPECT_EQ(b.busy_seconds, 3.5);
}

}  // namespace
}  // namespace kevolve::store

