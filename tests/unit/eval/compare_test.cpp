// Output comparison: every element, the dtype's tolerance, and the rules for
// non-finite values.
#include <cmath>
#include <vector>

#include <gtest/gtest.h>

#include "eval/compare.h"

namespace kevolve::eval {
namespace {

using spec::dtype;

const spec::tolerance kTol{1e-5, 1e-4};

compare_result cmp(const std::vector<float>& out, const std::vector<double>& ref, double scale = 1.0) {
  return compare_tensor("y", out.data(), dtype::f32, ref.data(), dtype::f64, int64_t(out.size()), kTol, scale);
}

std::vector<double> ramp(size_t n) {
  std::vector<double> r(n);
  for (size_t i = 0; i < n; ++i) r[i] = std::sin(double(i) * 0.01) * 3.0;
  return r;
}

std::vector<float> as_float(const std::vector<double>& r) { return std::vector<float>(r.begin(), r.end()); }

TEST(Compare, ExactCopyPassesWithTinyErrors) {
  const auto ref = ramp(300000);
  const auto r = cmp(as_float(ref), ref);
  EXPECT_TRUE(r.ok);
  EXPECT_EQ(r.mismatches, 0);
  EXPECT_GT(r.max_abs_error, 0.0);  // fp32 rounding of the fp64 values
  EXPECT_LT(r.max_error_ratio, 0.01);
}

TEST(Compare, OneBadElementIsFoundAndNamed) {
  const auto ref = ramp(300000);
  auto out = as_float(ref);
  out[123457] += 0.5f;
  const auto r = cmp(out, ref);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.mismatches, 1);
  EXPECT_NEAR(r.max_abs_error, 0.5, 1e-6);
  EXPECT_GT(r.max_error_ratio, 1000.0);
  EXPECT_NE(r.first_mismatch.find("y[123457]"), std::string::npos) << r.first_mismatch;
}

TEST(Compare, ErrorJustInsideTheToleranceIsAccepted) {
  std::vector<double> ref(1000, 2.0);
  std::vector<float> out(1000, float(2.0 + 0.9 * (1e-5 + 1e-4 * 2.0)));
  EXPECT_TRUE(cmp(out, ref).ok);
  out[7] = float(2.0 + 1.2 * (1e-5 + 1e-4 * 2.0));
  EXPECT_FALSE(cmp(out, ref).ok);
  EXPECT_TRUE(cmp(out, ref, 2.0).ok);  // the baseline-as-reference scale
}

TEST(Compare, NanWhereTheReferenceIsFiniteFails) {
  const auto ref = ramp(100000);
  auto out = as_float(ref);
  out[99999] = NAN;
  const auto r = cmp(out, ref);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.mismatches, 1);
  EXPECT_NE(r.first_mismatch.find("(finite)"), std::string::npos) << r.first_mismatch;
}

TEST(Compare, NonFiniteValuesMustMatchTheReference) {
  std::vector<double> ref = {1.0, NAN, INFINITY, -INFINITY};
  EXPECT_TRUE(cmp({1.0f, NAN, INFINITY, -INFINITY}, ref).ok);
  EXPECT_FALSE(cmp({1.0f, 0.0f, INFINITY, -INFINITY}, ref).ok);
  EXPECT_FALSE(cmp({1.0f, NAN, -INFINITY, -INFINITY}, ref).ok);
  EXPECT_FALSE(cmp({1.0f, NAN, INFINITY, 1e30f}, ref).ok);
}

TEST(Compare, AllNanOutputFailsEveryElement) {
  const auto ref = ramp(5000);
  const auto r = cmp(std::vector<float>(5000, NAN), ref);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.mismatches, 5000);
}

TEST(Compare, IntegersMustBeExact) {
  std::vector<int32_t> out = {1, 2, 3, 4};
  std::vector<int64_t> ref = {1, 2, 3, 5};
  auto r = compare_tensor("idx", out.data(), dtype::i32, ref.data(), dtype::i64, 4, {}, 1.0);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.mismatches, 1);
  EXPECT_NE(r.first_mismatch.find("idx[3] = 4, expected 5"), std::string::npos) << r.first_mismatch;
}

TEST(Compare, HalfPrecisionOutputsAreWidenedExactly) {
  std::vector<uint16_t> out = {kv_f32_to_f16(0.5f), kv_f32_to_f16(-2.0f)};
  std::vector<double> ref = {0.5, -2.0};
  EXPECT_TRUE(compare_tensor("h", out.data(), dtype::f16, ref.data(), dtype::f64, 2, {0, 0}, 1.0).ok);
  ref[1] = -2.001;
  EXPECT_FALSE(compare_tensor("h", out.data(), dtype::f16, ref.data(), dtype::f64, 2, {0, 0}, 1.0).ok);
}

}  // namespace
}  // namespace kevolve::eval
