// kv_mtia_cvt_f2i: the scaled floor with clamping on the SE and the vector
// core against a plain CPU reference (special values included), its cost on
// each engine, and the arguments it refuses.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "emu_test_util.h"

namespace kevolve::emu::mtia::testing {
namespace {

struct cvt_ctx {
  uint64_t x, out;
  int n, engine_vec;
  float a, b;
  int32_t lo, hi;
};

void cvt_program(kv_mtia_device* d, const void* u) {
  const cvt_ctx& c = *static_cast<const cvt_ctx*>(u);
  const int xin = kv_mtia_cb_alloc(d, c.n * 4, 1), res = kv_mtia_cb_alloc(d, c.n * 4, 1);
  kv_mtia_dma_in(d, xin, kv_mtia_rows(c.x, 1, c.n * 4, c.n * 4));
  kv_mtia_cvt_f2i(d, c.engine_vec, xin, KV_CB_POP, res, c.n, KV_F32, c.a, c.b, c.lo, c.hi);
  kv_mtia_dma_out(d, kv_mtia_rows(c.out, 1, c.n * 4, c.n * 4), res, KV_CB_POP);
}

int32_t reference(float x, float a, float b, int32_t lo, int32_t hi) {
  const float v = a * x + b;
  if (std::isnan(v)) return lo;
  const double f = std::floor(double(v));
  return f <= lo ? lo : f >= hi ? hi : int32_t(f);
}

run_result run_cvt(device& dev, cvt_ctx c, const std::vector<float>& x, std::vector<int32_t>* out) {
  const int64_t n = int64_t(x.size());
  const kv_tensor tx = device_tensor(dev, level::sram, {n}, KV_F32, x.data());
  const kv_tensor to = device_tensor(dev, level::sram, {n}, KV_I32);
  c.x = addr_of(tx);
  c.out = addr_of(to);
  c.n = int(n);
  dev.begin_run();
  kv_mtia_launch(dev.handle(), 1, cvt_program, &c);
  run_result r = dev.end_run();
  out->assign(size_t(n), 0);
  std::memcpy(out->data(), dev.host(c.out, uint64_t(n) * 4), size_t(n) * 4);
  return r;
}

TEST(emu_convert, scaled_floor_matches_the_reference_on_both_engines) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> x = {-inf, -2.5f, -1.0f, -0.0f, 0.0f, 0.2499999f, 0.25f, 0.9999999f, 1.0f, 3.7f, 1e30f, inf, nan};
  for (int i = 0; i < 4000; ++i) x.push_back(-1.25f + 2.5f * float(i) / 4000.0f);
  for (int e = 0; e < 2; ++e) {
    device dev(mtia2i());
    std::vector<int32_t> got;
    const cvt_ctx c{0, 0, 0, e, 4096.0f / 2.0f, 1.0f * 2048.0f, 0, 4095};
    ASSERT_TRUE(run_cvt(dev, c, x, &got).ok());
    for (size_t i = 0; i < x.size(); ++i)
      EXPECT_EQ(got[i], reference(x[i], c.a, c.b, c.lo, c.hi)) << "engine " << e << " x = " << x[i];
    EXPECT_EQ(got[0], 0);               // -inf
    EXPECT_EQ(got[11], 4095);           // +inf
    EXPECT_EQ(got[12], 0);              // NaN
  }
}

TEST(emu_convert, never_decreases_as_x_grows) {
  std::vector<float> x;
  for (float v = -3.0f; v < 3.0f; v = std::nextafter(v, 4.0f) + 3e-4f) x.push_back(v);
  device dev(mtia2i());
  std::vector<int32_t> got;
  ASSERT_TRUE(run_cvt(dev, cvt_ctx{0, 0, 0, 0, 3.3333333f, 7.1f, -5, 17}, x, &got).ok());
  for (size_t i = 1; i < got.size(); ++i) ASSERT_LE(got[i - 1], got[i]) << "at x = " << x[i];
}

TEST(emu_convert, costs_one_se_pass_or_one_vector_element_op) {
  std::vector<float> x(1 << 14, 0.5f);
  std::vector<int32_t> got;
  device se_dev(mtia2i()), vec_dev(mtia2i());
  const run_result on_se = run_cvt(se_dev, cvt_ctx{0, 0, 0, 0, 1, 0, 0, 10}, x, &got);
  const run_result on_vec = run_cvt(vec_dev, cvt_ctx{0, 0, 0, 1, 1, 0, 0, 10}, x, &got);
  ASSERT_TRUE(on_se.ok() && on_vec.ok());
  EXPECT_DOUBLE_EQ(on_se.busy[se], double(x.size()) / 32);
  EXPECT_DOUBLE_EQ(on_vec.busy[vec], double(x.size()) * 2 * 4 / 64);
}

TEST(emu_convert, refuses_non_finite_scale_empty_range_and_integer_input) {
  std::vector<float> x(64, 1.0f);
  std::vector<int32_t> got;
  for (const cvt_ctx& c : {cvt_ctx{0, 0, 0, 0, std::numeric_limits<float>::infinity(), 0, 0, 1},
                           cvt_ctx{0, 0, 0, 0, 1, std::numeric_limits<float>::quiet_NaN(), 0, 1},
                           cvt_ctx{0, 0, 0, 0, 1, 0, 5, 4}}) {
    device dev(mtia2i());
    const run_result r = run_cvt(dev, c, x, &got);
    EXPECT_EQ(r.status, KV_MTIA_ERR_ARG);
    EXPECT_NE(r.message.find("kv_mtia_cvt_f2i"), std::string::npos) << r.message;
  }
}

}  // namespace
}  // namespace kevolve::emu::mtia::testing
