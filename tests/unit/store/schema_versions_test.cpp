// What each store schema added, and that stores of every older schema still
// read: written now, then turned into what an older kevolve wrote (the
// version attribute set back, the newer datasets or columns removed).
#include <cmath>

#include <gtest/gtest.h>

#include "common/fs.h"
#include "common/paths.h"
#include "common/subprocess.h"
#include "store/hdf5_store.h"
#include "store_fixtures.h"

namespace kevolve::store {
namespace {

namespace fs = std::filesystem;
using namespace testing;

// Rewrites the store at `p` with h5py as kevolve wrote schema `version`: the
// `measurements` columns whose names start with one of `prefixes` removed.
// "" or what went wrong.
std::string as_older_schema(const fs::path& p, int version, const std::vector<std::string>& prefixes) {
  std::string tuple;
  for (const auto& x : prefixes) tuple += "'" + x + "', ";
  const std::string py =
      "import h5py, numpy as np, sys\n"
      "with h5py.File(sys.argv[1], 'r+') as f:\n"
      "    f.attrs.modify('schema_version', np.int32(" + std::to_string(version) + "))\n"
      "    for t in f['tasks'].values():\n"
      "        m = t['measurements'][()]\n"
      "        keep = [n for n in m.dtype.names if not n.startswith((" + tuple + "))]\n"
      "        old = np.zeros(m.shape, dtype=[(n, m.dtype[n]) for n in keep])\n"
      "        for n in keep: old[n] = m[n]\n"
      "        del t['measurements']\n"
      "        t.create_dataset('measurements', data=old)\n";
  // The project virtualenv's Python (its h5py), as every other test uses.
  auto h5py = run_subprocess({python_executable().string(), "-c", py, p.string()});
  if (!h5py) return h5py.error().message;
  return h5py->ok() ? "" : h5py->output;
}

// A store written by kevolve 0.1 before nodes had ranks (schema_version 1,
// tests/data/stores/schema1.h5) still reads: ranks unknown, no rank table.
TEST(Hdf5Store, SchemaVersionOneStoresStillRead) {
  const fs::path p = fs::path(KEVOLVE_TEST_SOURCE_DIR) / "tests/data/stores/schema1.h5";
  auto r = read_store(p);
  ASSERT_TRUE(r.has_value()) << r.error().message;
  ASSERT_EQ(r->tasks.size(), 1u);
  EXPECT_EQ(r->tasks[0].search.nodes.size(), 3u);
  EXPECT_TRUE(r->ranks.empty());
  for (const auto& n : r->tasks[0].search.nodes.nodes()) EXPECT_EQ(n.rank, -1);
  EXPECT_EQ(r->schema_version, kSchemaVersion);  // what a checkpoint writes back
}

// Schema 3 added the `llm` table and `llm_text`: a store without them and
// with schema_version 2 (what kevolve wrote before) still reads, with no
// exchanges; the rest of the record is intact.
TEST(Hdf5Store, SchemaVersionTwoStoresStillRead) {
  temp_dir d = make_dir("kevolve-store-schema-");
  const fs::path p = d.path() / "v2.h5";
  sweep_record rec = make_record();
  ASSERT_TRUE(write_store(p, rec).has_value());
  for (const char* t : {"/tasks/0", "/tasks/1"}) {
    ASSERT_TRUE(store_remove_object(p, std::string(t) + "/llm").has_value());
    ASSERT_TRUE(store_remove_object(p, std::string(t) + "/llm_text").has_value());
  }
  ASSERT_TRUE(store_set_int_attribute(p, "/", "schema_version", 2).has_value());
  auto r = read_store(p);
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_TRUE(r->tasks[0].llm.empty());
  for (auto& t : rec.tasks) {
    t.llm.clear();
    for (auto& m : t.measurements) m.torch_eager_median_s = m.torch_compile_median_s = 0;  // schema 4
    t.skills.clear();
  }
  drop_profiles(rec);  // schema 5
  EXPECT_EQ(diff_record(rec, *r), "");
}

// Schema 4 added the PyTorch times to `measurements`: a store whose
// measurements lack them (schema 3) still reads, with the times 0 (not
// measured), and the rest intact; schema 4 round-trips them.
TEST(Hdf5Store, SchemaVersionThreeStoresReadWithoutPyTorchTimes) {
  temp_dir d = make_dir("kevolve-store-schema-");
  sweep_record rec = make_record();
  bool any = false;
  for (const auto& t : rec.tasks)
    for (const auto& m : t.measurements) any |= m.torch_eager_median_s > 0 && m.torch_compile_median_s > 0;
  ASSERT_TRUE(any) << "the fixture has PyTorch times";
  const fs::path now = d.path() / "v4.h5";
  ASSERT_TRUE(write_store(now, rec).has_value());
  auto r4 = read_store(now);
  ASSERT_TRUE(r4.has_value()) << r4.error().message;
  EXPECT_EQ(diff_record(rec, *r4), "");

  // What kevolve wrote before schema 4: a compound without the two fields.
  const fs::path old = d.path() / "v3.h5";
  ASSERT_TRUE(write_store(old, rec).has_value());
  ASSERT_EQ(as_older_schema(old, 3, {"torch_", "profile_", "metrics_", "attainable_", "bound_"}), "");
  auto r3 = read_store(old);
  ASSERT_TRUE(r3.has_value()) << r3.error().message;
  for (auto& t : rec.tasks) {
    for (auto& m : t.measurements) m.torch_eager_median_s = m.torch_compile_median_s = 0;
    t.skills.clear();  // and the rest of schema 4: no skills, every exchange a kernel request
    for (auto& x : t.llm) x.purpose = "kernel";
  }
  drop_profiles(rec);  // schema 5
  EXPECT_EQ(diff_record(rec, *r3), "");
}

// Schema 5 added profiles and hardware-counter metrics to `measurements`
// (byte ranges into `text`): they round-trip exactly, and a store whose
// measurements lack the columns (schema 4, made with h5py as kevolve wrote
// it) still reads, with no profiles and no metrics and everything else,
// the PyTorch times included, intact.
TEST(Hdf5Store, SchemaVersionFourStoresReadWithoutProfilesOrMetrics) {
  temp_dir d = make_dir("kevolve-store-schema-");
  sweep_record rec = make_record();
  size_t profiled = 0;
  for (const auto& t : rec.tasks)
    for (const auto& m : t.measurements) profiled += !m.metrics.empty() && !m.profile.empty();
  ASSERT_GT(profiled, 0u) << "the fixture has profiled measurements";
  const fs::path now = d.path() / "v5.h5";
  ASSERT_TRUE(write_store(now, rec).has_value());
  auto r5 = read_store(now);
  ASSERT_TRUE(r5.has_value()) << r5.error().message;
  EXPECT_EQ(diff_record(rec, *r5), "");
  size_t back = 0;
  for (const auto& t : r5->tasks)
    for (const auto& m : t.measurements) back += m.metrics.count("dram_pct") && m.metrics.at("dram_pct") == 71.5;
  EXPECT_EQ(back, profiled);

  const fs::path old = d.path() / "v4.h5";
  ASSERT_TRUE(write_store(old, rec).has_value());
  ASSERT_EQ(as_older_schema(old, 4, {"profile_", "metrics_", "attainable_", "bound_"}), "");
  auto r4 = read_store(old);
  ASSERT_TRUE(r4.has_value()) << r4.error().message;
  drop_profiles(rec);
  EXPECT_EQ(diff_record(rec, *r4), "");
}

// Schema 6 added the attainable ceiling to `measurements` (its fraction and
// what bounds it, a byte range into `text`): both round-trip exactly, and a
// store without the columns (schema 5) reads with 0 and "" and everything
// else, profiles and metrics included, intact.
TEST(Hdf5Store, SchemaVersionFiveStoresReadWithoutTheAttainableCeiling) {
  temp_dir d = make_dir("kevolve-store-schema-");
  sweep_record rec = make_record();
  size_t with_ceiling = 0;
  for (const auto& t : rec.tasks)
    for (const auto& m : t.measurements) with_ceiling += m.attainable_fraction > 0 && !m.bound.empty();
  ASSERT_GT(with_ceiling, 0u) << "the fixture has ceilings";
  const fs::path now = d.path() / "v6.h5";
  ASSERT_TRUE(write_store(now, rec).has_value());
  auto r6 = read_store(now);
  ASSERT_TRUE(r6.has_value()) << r6.error().message;
  EXPECT_EQ(diff_record(rec, *r6), "");
  size_t back = 0;
  for (const auto& t : r6->tasks)
    for (const auto& m : t.measurements) back += m.bound == "launch + DPE split" || m.bound == "memory (SRAM)";
  EXPECT_EQ(back, with_ceiling);

  const fs::path old = d.path() / "v5.h5";
  ASSERT_TRUE(write_store(old, rec).has_value());
  ASSERT_EQ(as_older_schema(old, 5, {"attainable_", "bound_"}), "");
  auto r5 = read_store(old);
  ASSERT_TRUE(r5.has_value()) << r5.error().message;
  EXPECT_EQ(r5->schema_version, kSchemaVersion);  // what a checkpoint writes back
  drop_ceilings(rec);
  EXPECT_EQ(diff_record(rec, *r5), "");
}

// Metrics that JSON cannot hold exactly (NaN, infinity) are refused on
// write, naming the measurement and the metric; nothing is written.
TEST(Hdf5Store, NonFiniteMetricsAreRefusedOnWrite) {
  temp_dir d = make_dir("kevolve-store-schema-");
  sweep_record bad = make_record();
  ASSERT_FALSE(bad.tasks[0].measurements.empty());
  bad.tasks[0].measurements[0].metrics["dram_pct"] = std::nan("");
  const fs::path p = d.path() / "nan.h5";
  auto w = write_store(p, bad);
  ASSERT_FALSE(w.has_value());
  EXPECT_NE(w.error().message.find("measurement 0 has metric 'dram_pct' = nan, expected a finite number"),
            std::string::npos)
      << w.error().message;
  EXPECT_FALSE(fs::exists(p));
}

// Schema 4 added the llm rows' `purpose` and the `skills` tables: a version 3
// store reads with every exchange a kernel request and no skills.
TEST(Hdf5Store, SchemaVersionThreeStoresStillRead) {
  temp_dir d = make_dir("kevolve-store-schema-");
  const fs::path p = d.path() / "v3.h5";
  sweep_record rec = make_record();
  ASSERT_TRUE(write_store(p, rec).has_value());
  for (const char* t : {"/tasks/0", "/tasks/1"}) {
    ASSERT_TRUE(store_remove_object(p, std::string(t) + "/skills").has_value());
    ASSERT_TRUE(store_remove_object(p, std::string(t) + "/skills_text").has_value());
  }
  ASSERT_TRUE(store_set_int_attribute(p, "/", "schema_version", 3).has_value());
  auto r = read_store(p);
  ASSERT_TRUE(r.has_value()) << r.error().message;
  for (auto& t : rec.tasks) {
    t.skills.clear();
    for (auto& x : t.llm) x.purpose = "kernel";
    for (auto& m : t.measurements) m.torch_eager_median_s = m.torch_compile_median_s = 0;  // also schema 4
  }
  drop_profiles(rec);  // schema 5
  EXPECT_EQ(diff_record(rec, *r), "");
}

}  // namespace
}  // namespace kevolve::store
