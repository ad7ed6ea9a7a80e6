// The operator key `int_passes` (config/operators/README.md): integer work in
// 32-bit lane passes, resolved per shape for the attainable ceiling only.
#include <gtest/gtest.h>

#include "spec/operator_loader.h"
#include "spec_test_util.h"

namespace kevolve::spec {
namespace {

// feature_hash: salt 1, xor-shifts 6, multiplies 12, remainder 11 (one AND
// for a power-of-two table) per id.
TEST(IntPasses, FeatureHashCountsEachTablesRemainder) {
  auto op = load_operator(testing::catalog_dir() / "feature_hash.yaml");
  ASSERT_TRUE(op.has_value()) << op.error().message;
  const std::map<std::string, double> per_id = {
      {"ids_8m_prime_table_10m", 30}, {"ids_1m_table_500k", 29}, {"ids_4m_pow2_table_1m", 20}};
  for (const auto& sp : op->shapes) {
    auto p = resolve(*op, op->variants.front(), sp, false);
    ASSERT_TRUE(p.has_value()) << p.error().message;
    ASSERT_TRUE(per_id.count(sp.name)) << sp.name;
    EXPECT_DOUBLE_EQ(p->int_passes, per_id.at(sp.name) * double(sp.values.at("N"))) << sp.name;
  }
}

// An operator without the key has no integer work.
TEST(IntPasses, AbsentMeansNone) {
  auto op = load_operator(testing::catalog_dir() / "bias_gelu.yaml");
  ASSERT_TRUE(op.has_value()) << op.error().message;
  EXPECT_TRUE(op->int_passes.empty());
  auto p = resolve(*op, op->variants.front(), op->shapes.front(), false);
  ASSERT_TRUE(p.has_value()) << p.error().message;
  EXPECT_EQ(p->int_passes, 0.0);
}

}  // namespace
}  // namespace kevolve::spec
