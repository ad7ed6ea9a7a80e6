// Functional results of the SE, vector core, MLU, indexed DMA, reduction
// network and barriers against plain CPU references.
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>

#include "emu_test_util.h"

namespace kevolve::emu::mtia::testing {
namespace {

struct rows_ctx {
  uint64_t x, bias, y;
  int rows_per_program, cols;
};

// softmax(x + bias) per row, one row block per program, all on the SE.
void softmax_program(kv_mtia_device* d, const void* u) {
  const rows_ctx& c = *static_cast<const rows_ctx*>(u);
  const int r0 = kv_mtia_program_id(d) * c.rows_per_program, R = c.rows_per_program, C = c.cols;
  const int cx = kv_mtia_cb_alloc(d, R * C * 4, 2), cb = kv_mtia_cb_alloc(d, C * 4, 1);
  const int t1 = kv_mtia_cb_alloc(d, R * C * 4, 1), mx = kv_mtia_cb_alloc(d, R * 4, 1);
  const int t2 = kv_mtia_cb_alloc(d, R * C * 4, 1), t3 = kv_mtia_cb_alloc(d, R * C * 4, 1);
  const int sm = kv_mtia_cb_alloc(d, R * 4, 1), out = kv_mtia_cb_alloc(d, R * C * 2, 1);
  kv_mtia_dma_in(d, cx, kv_mtia_rows(c.x + uint64_t(r0) * C * 4, R, C * 4, C * 4));
  kv_mtia_dma_in(d, cb, kv_mtia_rows(c.bias, 1, C * 4, C * 4));
  // se ops: one consumer engine per CB, so every intermediate gets its own CB
  kv_mtia_se_binary(d, KV_OP_ADD, cx, 0, cb, 0, KV_Y_ROW, t1, R, C, KV_F32, KV_F32);
  kv_mtia_se_binary(d, KV_OP_RMAX, t1, KV_CB_KEEP, -1, 0, 0, mx, R, C, KV_F32, KV_F32);
  kv_mtia_se_binary(d, KV_OP_SUB, t1, 0, mx, 0, KV_Y_COL, t2, R, C, KV_F32, KV_F32);
  kv_mtia_se_unary(d, KV_OP_EXP, t2, 0, t3, R, C, KV_F32, KV_F32, 1, 0);
  kv_mtia_se_binary(d, KV_OP_SUM, t3, KV_CB_KEEP, -1, 0, 0, sm, R, C, KV_F32, KV_F32);
  kv_mtia_se_binary(d, KV_OP_DIV, t3, 0, sm, 0, KV_Y_COL, out, R, C, KV_F32, KV_F16);
  kv_mtia_dma_out(d, kv_mtia_rows(c.y + uint64_t(r0) * C * 2, R, C * 2, C * 2), out, 0);
}

TEST(emu_engines, se_softmax_with_bias_matches_reference) {
  device dev(mtia2i());
  const int rows = 64 * 4, cols = 96;
  std::vector<float> x(rows * cols), bias(cols);
  for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(0.37f * i) * 4;
  for (int j = 0; j < cols; ++j) bias[j] = 0.01f * j;
  const kv_tensor tx = device_tensor(dev, level::sram, {rows, cols}, KV_F32, x.data());
  const kv_tensor tb = device_tensor(dev, level::sram, {cols}, KV_F32, bias.data());
  const kv_tensor ty = device_tensor(dev, level::dram, {rows, cols}, KV_F16);
  rows_ctx c{addr_of(tx), addr_of(tb), addr_of(ty), 4, cols};
  dev.begin_run();
  ASSERT_EQ(kv_mtia_launch(dev.handle(), 64, softmax_program, &c), 0) << dev.current().message;
  const run_result r = dev.end_run();
  ASSERT_TRUE(r.ok());
  EXPECT_GT(r.utilisation[se], 0);
  const auto* y = reinterpret_cast<const uint16_t*>(dev.host(addr_of(ty), rows * cols * 2));
  for (int i = 0; i < rows; ++i) {
    double mx = -1e30, s = 0;
    for (int j = 0; j < cols; ++j) mx = std::max(mx, double(x[i * cols + j] + bias[j]));
    for (int j = 0; j < cols; ++j) s += std::exp(double(x[i * cols + j] + bias[j]) - mx);
    for (int j = 0; j < cols; ++j) {
      const double ref = std::exp(double(x[i * cols + j] + bias[j]) - mx) / s;
      ASSERT_NEAR(kv_f16_to_f32(y[i * cols + j]), ref, 1e-3 + 1e-3 * ref) << i << "," << j;
    }
  }
}

struct bag_ctx {
  uint64_t table, idx, out;
  int dim, bag;
};

// embedding-bag sum: indexed DMA of `bag` rows, SE row-accumulate; vector
// core prefix sum and MLU transpose on the side.
void bag_program(kv_mtia_device* d, const void* u) {
  const bag_ctx& c = *static_cast<const bag_ctx*>(u);
  const int b = kv_mtia_program_id(d);
  const int ci = kv_mtia_cb_alloc(d, c.bag * 4, 1), rows = kv_mtia_cb_alloc(d, c.bag * c.dim * 2, 2);
  const int sum = kv_mtia_cb_alloc(d, c.dim * 4, 1);
  kv_mtia_dma_in(d, ci, kv_mtia_rows(c.idx + uint64_t(b) * c.bag * 4, 1, c.bag * 4, c.bag * 4));
  kv_mtia_dma_gather(d, rows, c.table, 1000, c.dim * 2, c.dim * 2, ci, c.bag, KV_I32, 0);
  kv_mtia_se_row_accum(d, rows, 0, c.bag, c.dim, KV_F16, sum, KV_F32);
  kv_mtia_dma_out(d, kv_mtia_rows(c.out + uint64_t(b) * c.dim * 4, 1, c.dim * 4, c.dim * 4), sum, 0);
}

TEST(emu_engines, indexed_gather_and_row_accumulate_give_embedding_bag_sums) {
  device dev(mtia2i());
  const int dim = 64, bag = 24, bags = 100;  // 96-byte index rows stay 32-byte aligned  // more programs than PEs: round robin
  const auto table = random_f16(1000 * dim, 5);
  std::vector<int32_t> idx(bags * bag);
  for (size_t i = 0; i < idx.size(); ++i) idx[i] = static_cast<int32_t>((i * 7919) % 1000);
  const kv_tensor tt = device_tensor(dev, level::dram, {1000, dim}, KV_F16, table.data());
  const kv_tensor ti = device_tensor(dev, level::sram, {bags, bag}, KV_I32, idx.data());
  const kv_tensor to = device_tensor(dev, level::sram, {bags, dim}, KV_F32);
  bag_ctx c{addr_of(tt), addr_of(ti), addr_of(to), dim, bag};
  dev.begin_run();
  ASSERT_EQ(kv_mtia_launch(dev.handle(), bags, bag_program, &c), 0) << dev.current().message;
  const run_result r = dev.end_run();
  ASSERT_TRUE(r.ok());
  EXPECT_GT(r.stalls[stall_barrier], 0);  // program switches on the PEs that ran two bags
  const auto* o = reinterpret_cast<const float*>(dev.host(addr_of(to), bags * dim * 4));
  for (int b = 0; b < bags; ++b)
    for (int j = 0; j < dim; ++j) {
      double s = 0;
      for (int k = 0; k < bag; ++k) s += kv_f16_to_f32(table[size_t(idx[b * bag + k]) * dim + j]);
      ASSERT_NEAR(o[b * dim + j], s, 1e-4) << b << "," << j;
    }
  // an index outside the table is an error, not a read of foreign memory
  idx[17] = 1000;
  std::memcpy(dev.host(addr_of(ti), idx.size() * 4), idx.data(), idx.size() * 4);
  dev.begin_run();
  EXPECT_EQ(kv_mtia_launch(dev.handle(), bags, bag_program, &c), KV_MTIA_ERR_ADDRESS);
  EXPECT_NE(dev.end_run().message.find("outside the table"), std::string::npos);
}

struct misc_ctx {
  uint64_t in, out;
};

// vector-core cumsum (i32), MLU transpose and concat, RE min/max, fused drain.
void misc_program(kv_mtia_device* d, const void* u) {
  const misc_ctx& c = *static_cast<const misc_ctx*>(u);
  if (kv_mtia_program_id(d) != 0) return;
  const int a = kv_mtia_cb_alloc(d, 8 * 16 * 4, 1), cs = kv_mtia_cb_alloc(d, 8 * 16 * 4, 1);
  const int tr = kv_mtia_cb_alloc(d, 8 * 16 * 4, 1), b = kv_mtia_cb_alloc(d, 8 * 16 * 4, 1);
  const int cat = kv_mtia_cb_alloc(d, 8 * 32 * 4, 1);
  kv_mtia_dma_in(d, a, kv_mtia_rows(c.in, 8, 64, 64));
  kv_mtia_vec_op(d, KV_OP_CUMSUM, a, 0, -1, 0, 0, cs, 8, 16, KV_I32, KV_I32, 1, 0);
  kv_mtia_mlu_transpose(d, cs, 0, 8, 16, 4, tr);
  kv_mtia_dma_in(d, b, kv_mtia_rows(c.in, 8, 64, 64));
  kv_mtia_mlu_concat(d, tr, b, 0, 8, 64, 64, cat);  // rows of the 16x8 transpose, read as 8 rows of 64 bytes
  kv_mtia_dma_out(d, kv_mtia_rows(c.out, 8, 128, 128), cat, 0);
}

TEST(emu_engines, vector_cumsum_mlu_transpose_and_concat) {
  device dev(mtia2i());
  std::vector<int32_t> in(8 * 16);
  std::iota(in.begin(), in.end(), -40);
  const kv_tensor ti = device_tensor(dev, level::sram, {8, 16}, KV_I32, in.data());
  const kv_tensor to = device_tensor(dev, level::sram, {8, 32}, KV_I32);
  misc_ctx c{addr_of(ti), addr_of(to)};
  dev.begin_run();
  ASSERT_EQ(kv_mtia_launch(dev.handle(), 1, misc_program, &c), 0) << dev.current().message;
  ASSERT_TRUE(dev.end_run().ok());
  std::vector<int32_t> cs(in.size()), trn(in.size());
  for (int r = 0; r < 8; ++r)
    for (int j = 0, s = 0; j < 16; ++j) cs[r * 16 + j] = s += in[r * 16 + j];
  for (int r = 0; r < 8; ++r)
    for (int j = 0; j < 16; ++j) trn[j * 8 + r] = cs[r * 16 + j];
  const auto* o = reinterpret_cast<const int32_t*>(dev.host(addr_of(to), 8 * 32 * 4));
  for (int r = 0; r < 8; ++r)
    for (int j = 0; j < 32; ++j) ASSERT_EQ(o[r * 32 + j], j < 16 ? trn[r * 16 + j] : in[r * 16 + j - 16]) << r << "," << j;
}

struct splitk_ctx {
  uint64_t a, b, bias, c;
  int m, n, k;
};

// Split-K over a PE column: PE (r, 0) multiplies K block r; partial sums flow
// north over the reduction network; PE (0, 0) drains bias + relu. Then a
// barrier, and every PE of row 0 reads the result back (barrier ordering).
void splitk_program(kv_mtia_device* d, const void* u) {
  const splitk_ctx& s = *static_cast<const splitk_ctx*>(u);
  const int r = kv_mtia_pe_row(d), col = kv_mtia_pe_col(d), rows = kv_mtia_grid_rows(d);
  if (col == 0) {
    const int kb = s.k / rows;
    const int ca = kv_mtia_cb_alloc(d, s.m * kb * 2, 1), cb = kv_mtia_cb_alloc(d, kb * s.n * 2, 1);
    const int acc = kv_mtia_acc_alloc(d, s.m, s.n);
    kv_mtia_dma_in(d, ca, kv_mtia_rows(s.a + uint64_t(r) * kb * 2, s.m, kb * 2, s.k * 2));
    kv_mtia_dma_in(d, cb, kv_mtia_rows(s.b + uint64_t(r) * kb * s.n * 2, kb, s.n * 2, s.n * 2));
    kv_mtia_dpe_load_b(d, cb, kb, s.n, KV_F16, 0);
    kv_mtia_dpe_mm(d, ca, s.m, kb, kb, acc, KV_MM_ZERO);
    if (r + 1 < rows) kv_mtia_re_recv(d, acc, KV_DIR_SOUTH, 1);
    if (r > 0) {
      kv_mtia_re_send(d, acc, KV_DIR_NORTH);
    } else {
      const int cbias = kv_mtia_cb_alloc(d, s.n * 4, 1), out = kv_mtia_cb_alloc(d, s.m * s.n * 4, 1);
      kv_mtia_dma_in(d, cbias, kv_mtia_rows(s.bias, 1, s.n * 4, s.n * 4));
      kv_mtia_re_drain(d, acc, out, KV_F32, KV_OP_RELU, cbias, 0);
      kv_mtia_dma_out(d, kv_mtia_rows(s.c, s.m, s.n * 4, s.n * 4), out, 0);
    }
  }
  kv_mtia_barrier(d);
  if (r == 0 && col > 0) {  // copy the finished result into slot `col` of the output
    const int t = kv_mtia_cb_alloc(d, s.m * s.n * 4, 1);
    kv_mtia_dma_in(d, t, kv_mtia_rows(s.c, s.m, s.n * 4, s.n * 4));
    kv_mtia_dma_out(d, kv_mtia_rows(s.c + uint64_t(col) * s.m * s.n * 4, s.m, s.n * 4, s.n * 4), t, 0);
  }
}

TEST(emu_engines, split_k_over_the_reduction_network_then_barrier) {
  device dev(mtia2i());
  const int m = 16, n = 32, k = 8 * 64;
  const auto a = random_f16(m * k, 8), b = random_f16(k * n, 9);
  std::vector<float> bias(n);
  for (int j = 0; j < n; ++j) bias[j] = 0.1f * (j - 16);
  const kv_tensor ta = device_tensor(dev, level::sram, {m, k}, KV_F16, a.data());
  const kv_tensor tb = device_tensor(dev, level::sram, {k, n}, KV_F16, b.data());
  const kv_tensor tbias = device_tensor(dev, level::sram, {n}, KV_F32, bias.data());
  const kv_tensor tc = device_tensor(dev, level::sram, {8, m, n}, KV_F32);
  splitk_ctx s{addr_of(ta), addr_of(tb), addr_of(tbias), addr_of(tc), m, n, k};
  dev.begin_run();
  ASSERT_EQ(kv_mtia_launch(dev.handle(), 64, splitk_program, &s), 0) << dev.current().message;
  const run_result r = dev.end_run();
  ASSERT_TRUE(r.ok());
  const auto ref = gemm_reference(a, b, m, n, k);
  const auto* c = reinterpret_cast<const float*>(dev.host(addr_of(tc), 8 * m * n * 4));
  for (int copy = 0; copy < 8; ++copy)
    for (int i = 0; i < m * n; ++i)
      ASSERT_NEAR(c[copy * m * n + i], std::max(0.0, ref[i] + bias[i % n]), 1e-4 + 1e-5 * std::fabs(ref[i]))
          << copy << "," << i;
  EXPECT_GT(r.stalls[stall_barrier], 0);
}

}  // namespace
}  // namespace kevolve::emu::mtia::testing
