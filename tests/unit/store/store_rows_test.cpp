// The flat tables of a task (no HDF5): exact flatten/unflatten round trips,
// and ranges that point past the text or the context lists are refused with
// the row named, rather than read out of bounds.
#include "store/store_rows.h"

#include <gtest/gtest.h>

#include "store/record_check.h"
#include "store_fixtures.h"

namespace kevolve::store {
namespace {

using namespace testing;

struct flat {
  task_tables tables;
  std::string text;
};

flat flatten_to_string(const task_record& t) {
  flat f;
  f.tables = flatten(t, [&f](std::string_view s) {
    const uint64_t at = f.text.size();
    f.text.append(s);
    return at;
  });
  return f;
}

std::string unflatten_from(const flat& f, task_record& out) {
  return unflatten(f.tables, f.text.size(), [&f](uint64_t o, uint64_t n) { return f.text.substr(o, n); }, out);
}

TEST(StoreRows, FlattenThenUnflattenGivesBackTheTask) {
  const task_record t = grow_task("softmax", "tournament", 5, 50).record;
  const flat f = flatten_to_string(t);
  EXPECT_EQ(f.text.size(), text_bytes(t));
  task_record back = t;
  back.search.nodes = search::tree();
  back.measurements.clear();
  ASSERT_EQ(unflatten_from(f, back), "");
  EXPECT_EQ(check_task(back), "");
  sweep_record a, b;
  a.tasks = {t};
  b.tasks = {back};
  EXPECT_EQ(diff_record(a, b), "");
}

TEST(StoreRows, RangesPastTheEndAreRefusedWithTheRowNamed) {
  const task_record t = grow_task("softmax", "uct", 5, 30).record;
  flat f = flatten_to_string(t);
  task_record out;
  f.tables.nodes[4].code_length = f.text.size();
  EXPECT_NE(unflatten_from(f, out).find("nodes: node 4 code: byte range"), std::string::npos) << unflatten_from(f, out);

  f = flatten_to_string(t);
  f.tables.nodes[7].context_offset = f.tables.context.size();
  f.tables.nodes[7].context_length = 1;
  EXPECT_NE(unflatten_from(f, out).find("nodes: node 7: context range"), std::string::npos) << unflatten_from(f, out);

  f = flatten_to_string(t);
  ASSERT_FALSE(f.tables.measurements.empty());
  f.tables.measurements[0].bottleneck_offset = ~uint64_t(0);
  EXPECT_NE(unflatten_from(f, out).find("measurements: row 0 bottleneck"), std::string::npos) << unflatten_from(f, out);
}

// Metrics are stored as a JSON object of numbers in `text`: anything else
// there is refused with the row named; an empty range is "not profiled".
TEST(StoreRows, MetricsThatAreNotAnObjectOfNumbersAreRefusedWithTheRowNamed) {
  task_record t = grow_task("softmax", "uct", 5, 30).record;
  ASSERT_GE(t.measurements.size(), 2u);
  t.measurements[1].metrics = {{"dram_pct", 55.0}};
  t.measurements[1].profile.clear();
  flat f = flatten_to_string(t);
  task_record out;
  ASSERT_EQ(unflatten_from(f, out), "");
  EXPECT_EQ(out.measurements[1].metrics, t.measurements[1].metrics);
  EXPECT_EQ(out.measurements[1].profile, "");
  EXPECT_EQ(f.tables.measurements[1].profile_length, 0u);

  for (const std::string& bad : {std::string("[1, 2]"), std::string("{\"dram_pct\": \"high\"}"), std::string("{oops")}) {
    flat g = f;
    g.tables.measurements[1].metrics_offset = g.text.size();
    g.tables.measurements[1].metrics_length = bad.size();
    g.text += bad;
    const std::string why = unflatten_from(g, out);
    EXPECT_NE(why.find("measurements: row 1 metrics: "), std::string::npos) << bad << ": " << why;
  }
}

TEST(StoreRows, UnknownEnumValuesAreCaughtByTheCheck) {
  const task_record t = grow_task("softmax", "uct", 5, 30).record;
  flat f = flatten_to_string(t);
  f.tables.nodes[3].status = 42;
  task_record out;
  ASSERT_EQ(unflatten_from(f, out), "");
  EXPECT_NE(check_task(out).find("node 3 has status 42"), std::string::npos) << check_task(out);
}

}  // namespace
}  // namespace kevolve::store
