// The host-vectorised inner loops give their scalar definitions' bits:
// fp16 conversions over every fp16 value and every fp32 rounding case, the
// DPE tile matmul against the per-element loop on ragged shapes, and the SE
// row max and sum against the running max and the in-order sum (signed zeros,
// NaN, Inf and cancelling magnitudes), and the SE's EXP against libm's expf,
// whatever the host's vector unit.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "emu/mtia/host_kernels.h"
#include "emu_test_util.h"

namespace kevolve::emu::mtia::testing {
namespace {

uint32_t bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
float from_bits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

TEST(emu_host_kernels, fp16_widen_gives_the_scalar_bits_for_every_fp16_value) {
  std::vector<uint16_t> h(65536 + 13);
  for (size_t i = 0; i < h.size(); ++i) h[i] = uint16_t(i * 40503u);  // odd multiplier: every value, shuffled
  for (int off : {0, 3}) {  // groups of eight start at a different element, and a ragged tail
    const int64_t n = int64_t(h.size()) - off;
    std::vector<float> got(static_cast<size_t>(n));
    widen_f16(reinterpret_cast<const uint8_t*>(h.data() + off), n, got.data());
    for (int64_t i = 0; i < n; ++i)
      ASSERT_EQ(bits(got[size_t(i)]), bits(kv_f16_to_f32(h[size_t(off + i)])))
          << "fp16 0x" << std::hex << h[size_t(off + i)];
  }
}

TEST(emu_host_kernels, fp16_narrow_gives_the_scalar_bits_at_every_rounding_case) {
  // Every sign, exponent and top 10 mantissa bits, with the low 13 bits at
  // the rounding boundaries of a normal fp16 (below, at and above the tie,
  // odd and even), which also covers the subnormal and overflow ranges and
  // every Inf and NaN class; then random patterns.
  const uint32_t lows[] = {0x0, 0x1, 0xfff, 0x1000, 0x1001, 0x1fff};
  std::vector<float> x;
  x.reserve((size_t(1) << 19) * 6 + 100000);
  for (uint32_t hi = 0; hi < (1u << 19); ++hi)
    for (uint32_t lo : lows) x.push_back(from_bits(hi << 13 | lo));
  std::mt19937 rng(7);
  for (int i = 0; i < 100000; ++i) x.push_back(from_bits(rng()));
  x.push_back(1.0f);  // a ragged tail
  std::vector<uint16_t> got(x.size());
  narrow_f16(x.data(), int64_t(x.size()), reinterpret_cast<uint8_t*>(got.data()));
  for (size_t i = 0; i < x.size(); ++i)
    ASSERT_EQ(got[i], kv_f32_to_f16(x[i])) << "fp32 0x" << std::hex << bits(x[i]);
}

TEST(emu_host_kernels, tile_matmul_adds_each_product_in_k_order_on_ragged_shapes) {
  std::mt19937 rng(11);
  const float specials[] = {0.0f, -0.0f, 1e-30f, -1e-30f, 3e-39f, 65504.0f, -65504.0f, 1e8f, -1e8f};
  auto value = [&] {
    const uint32_t r = rng();
    if (r % 8 == 0) return specials[(r >> 3) % 9];
    return std::uniform_real_distribution<float>(-2.0f, 2.0f)(rng);
  };
  for (int m : {1, 3, 4, 5, 8, 9})
    for (int k : {1, 7, 32})
      for (int n : {1, 5, 16, 17, 31, 32, 33, 48, 70}) {
        std::vector<float> a(size_t(m) * k), b(size_t(k) * n), o(size_t(m) * n);
        for (float& v : a) v = value();
        for (float& v : b) v = value();
        for (float& v : o) v = value();
        std::vector<float> ref = o;
        for (int i = 0; i < m; ++i)
          for (int j = 0; j < n; ++j) {
            float acc = ref[size_t(i) * n + j];
            for (int kk = 0; kk < k; ++kk) {
              const float p = a[size_t(i) * k + kk] * b[size_t(kk) * n + j];
              acc = acc + p;
            }
            ref[size_t(i) * n + j] = acc;
          }
        mm_tile(a.data(), b.data(), m, k, n, o.data());
        for (size_t e = 0; e < o.size(); ++e)
          ASSERT_EQ(bits(o[e]), bits(ref[e])) << m << "x" << k << "x" << n << " element " << e;
      }
}

struct reduce_ctx {
  uint64_t x, mx, sum;
  int rows, cols;
};

// One row of `bytes` (a single row's stride only has to be aligned).
kv_mtia_view one_row(uint64_t addr, int bytes) { return kv_mtia_rows(addr, 1, bytes, (bytes + 31) / 32 * 32); }

void reduce_program(kv_mtia_device* d, const void* u) {
  const reduce_ctx& c = *static_cast<const reduce_ctx*>(u);
  const int xin = kv_mtia_cb_alloc(d, c.rows * c.cols * 4, 1);
  const int mx = kv_mtia_cb_alloc(d, c.rows * 4, 1), sm = kv_mtia_cb_alloc(d, c.rows * 4, 1);
  kv_mtia_dma_in(d, xin, one_row(c.x, c.rows * c.cols * 4));
  kv_mtia_se_binary(d, KV_OP_RMAX, xin, KV_CB_KEEP, -1, 0, 0, mx, c.rows, c.cols, KV_F32, KV_F32);
  kv_mtia_se_binary(d, KV_OP_SUM, xin, KV_CB_POP, -1, 0, 0, sm, c.rows, c.cols, KV_F32, KV_F32);
  kv_mtia_dma_out(d, one_row(c.mx, c.rows * 4), mx, KV_CB_POP);
  kv_mtia_dma_out(d, one_row(c.sum, c.rows * 4), sm, KV_CB_POP);
}

TEST(emu_host_kernels, se_row_max_and_sum_match_the_running_max_and_the_in_order_sum) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  const float max_pool[] = {0.0f, -0.0f, nan, -inf, inf, -1.0f, 2.0f, 1e-40f, -1e-40f, -3.5f};
  const float sum_pool[] = {0.0f, -0.0f, 1e8f, -1e8f, 1.0f, 0.1f, -0.3f, 1e-40f, 3e38f};
  std::mt19937 rng(5);
  for (int rows : {1, 2, 7, 8, 11, 17})
    for (int cols : {1, 5, 8, 9, 64, 67}) {
      std::vector<float> xm(size_t(rows) * cols), xs(size_t(rows) * cols);
      for (float& v : xm) v = max_pool[rng() % 10];
      for (float& v : xs) v = sum_pool[rng() % 9];
      if (rows > 1 && cols > 8)  // two zeros, the first -0 (+0 in row 1) and a later one in a lower lane of 8
        for (int r = 0; r < 2; ++r)
          for (int j = 0; j < cols; ++j)
            xm[size_t(r * cols + j)] = j == 3 ? (r ? 0.0f : -0.0f) : j == 8 ? (r ? -0.0f : 0.0f) : -1.0f;
      for (int pass = 0; pass < 2; ++pass) {
        const std::vector<float>& x = pass == 0 ? xm : xs;
        device dev(mtia2i());
        const kv_tensor tx = device_tensor(dev, level::sram, {rows, cols}, KV_F32, x.data());
        const kv_tensor tm = device_tensor(dev, level::sram, {rows}, KV_F32);
        const kv_tensor ts = device_tensor(dev, level::sram, {rows}, KV_F32);
        const reduce_ctx c{addr_of(tx), addr_of(tm), addr_of(ts), rows, cols};
        dev.begin_run();
        ASSERT_EQ(kv_mtia_launch(dev.handle(), 1, reduce_program, &c), 0) << dev.current().message;
        ASSERT_TRUE(dev.end_run().ok());
        const auto* got = reinterpret_cast<const float*>(dev.host(pass == 0 ? c.mx : c.sum, uint64_t(rows) * 4));
        for (int r = 0; r < rows; ++r) {
          float ref = pass == 0 ? -inf : 0.0f;
          for (int j = 0; j < cols; ++j) {
            const float v = x[size_t(r) * cols + j];
            ref = pass == 0 ? std::max(ref, v) : ref + v;
          }
          ASSERT_EQ(bits(got[r]), bits(ref)) << (pass == 0 ? "max" : "sum") << " of row " << r << " of " << rows
                                             << " x " << cols;
        }
      }
    }
}


// Every exponent and sign with random mantissas, softmax-like inputs (x -
// max <= 0), the range edges where libm over- or underflows, and groups of
// eight that mix ordinary lanes with Inf, NaN (payload kept) and denormals.
TEST(emu_host_kernels, se_exp_gives_libm_expf_bits) {
  std::mt19937 rng(7);
  std::vector<float> x;
  for (uint32_t e = 0; e < 256; ++e)
    for (int k = 0; k < 64; ++k) x.push_back(from_bits((e << 23) | (rng() & 0x807fffffu)));
  std::uniform_real_distribution<float> soft(-30.0f, 0.0f);
  for (int k = 0; k < 4096; ++k) x.push_back(soft(rng));
  for (float edge : {88.0f, 88.7228f, 88.72284f, 89.0f, -87.33655f, -103.2789f, -103.97208f, -104.0f, 0.0f, -0.0f})
    for (float d : {-1e-3f, 0.0f, 1e-3f}) x.push_back(edge + d), x.push_back(-(edge + d));
  const float odd[] = {std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(),
                       from_bits(0x7fc01234u), from_bits(0xffa00001u), from_bits(0x00000001u), 1e-40f};
  for (float o : odd)
    for (int lane = 0; lane < 8; ++lane) {
      for (int k = 0; k < 8; ++k) x.push_back(k == lane ? o : 0.5f * float(k) - 1.0f);
    }
  x.push_back(0.25f);  // a ragged tail
  for (int off : {0, 5}) {
    std::vector<float> got(x.begin() + off, x.end());
    exp_row(got.data(), int32_t(got.size()));
    for (size_t i = 0; i < got.size(); ++i)
      ASSERT_EQ(bits(got[i]), bits(std::exp(x[i + size_t(off)]))) << "input 0x" << std::hex << bits(x[i + size_t(off)]);
  }
}

}  // namespace
}  // namespace kevolve::emu::mtia::testing
