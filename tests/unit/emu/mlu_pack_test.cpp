// kv_mtia_mlu_pack / kv_mtia_mlu_tril: whole matrices and triangles of several
// matrices packed into one slot and written out by one DMA, the cost, and the
// orders and arguments it refuses.
#include <gtest/gtest.h>

#include <vector>

#include "emu_test_util.h"

namespace kevolve::emu::mtia::testing {
namespace {

struct tril_ctx {
  uint64_t m, out;
  int n, ld, count, first_part;
  bool full = false;  // kv_mtia_mlu_pack of the whole n x n (row stride ld) instead
};

// `count` n x ld fp32 matrices, each DMA'd into its own slot, packed into one.
void tril_program(kv_mtia_device* d, const void* u) {
  const tril_ctx& c = *static_cast<const tril_ctx*>(u);
  const int mat = c.n * c.ld * 4, tri = (c.full ? c.n * c.n : c.n * (c.n - 1) / 2) * 4;
  const int in = kv_mtia_cb_alloc(d, mat, 2), out = kv_mtia_cb_alloc(d, tri * c.count, 1);
  for (int k = 0; k < c.count; ++k) {
    kv_mtia_dma_in(d, in, kv_mtia_rows(c.m + uint64_t(k) * mat, 1, mat, mat));
    const int part = k == 0 ? c.first_part : k;
    if (c.full) kv_mtia_mlu_pack(d, in, KV_CB_POP, c.n, c.n, c.ld, 4, out, part, c.count);
    else kv_mtia_mlu_tril(d, in, KV_CB_POP, c.n, c.ld, 4, out, part, c.count);
  }
  kv_mtia_dma_out(d, kv_mtia_rows(c.out, 1, tri * c.count, tri * c.count), out, KV_CB_POP);
}

run_result run_tril(tril_ctx c, std::vector<float>* got, std::vector<float>* want) {
  std::vector<float> m(size_t(c.count) * c.n * c.ld);
  for (size_t i = 0; i < m.size(); ++i) m[i] = float(i) * 0.5f - 3.0f;
  want->clear();
  for (int k = 0; k < c.count; ++k)
    for (int i = c.full ? 0 : 1; i < c.n; ++i)
      for (int j = 0; j < (c.full ? c.n : i); ++j) want->push_back(m[(size_t(k) * c.n + i) * c.ld + j]);
  device dev(mtia2i());
  const kv_tensor tm = device_tensor(dev, level::sram, {int64_t(m.size())}, KV_F32, m.data());
  const kv_tensor to = device_tensor(dev, level::sram, {int64_t(want->size())}, KV_F32);
  c.m = addr_of(tm);
  c.out = addr_of(to);
  dev.begin_run();
  kv_mtia_launch(dev.handle(), 1, tril_program, &c);
  run_result r = dev.end_run();
  got->assign(want->size(), 0.0f);
  std::memcpy(got->data(), dev.host(c.out, want->size() * 4), want->size() * 4);
  return r;
}

TEST(emu_mlu_pack, packs_the_triangles_of_several_matrices_into_one_slot) {
  std::vector<float> got, want;
  const run_result r = run_tril(tril_ctx{0, 0, 27, 32, 3, 0}, &got, &want);
  ASSERT_TRUE(r.ok()) << r.message;
  ASSERT_EQ(want.size(), 3u * 351u);
  EXPECT_EQ(got, want);
  // 3 triangles of 351 fp32 values at 64 bytes per cycle
  EXPECT_DOUBLE_EQ(r.busy[mlu], 3 * std::ceil(351.0 * 4 / 64));
}

TEST(emu_mlu_pack, refuses_parts_out_of_order_and_a_row_stride_below_n) {
  std::vector<float> got, want;
  run_result r = run_tril(tril_ctx{0, 0, 5, 8, 2, 1}, &got, &want);
  EXPECT_EQ(r.status, KV_MTIA_ERR_ARG);
  EXPECT_NE(r.message.find("out of order"), std::string::npos) << r.message;
  r = run_tril(tril_ctx{0, 0, 9, 8, 2, 0}, &got, &want);
  EXPECT_EQ(r.status, KV_MTIA_ERR_ARG);
  EXPECT_NE(r.message.find("kv_mtia_mlu_pack"), std::string::npos) << r.message;
}

TEST(emu_mlu_pack, packs_whole_matrices_without_their_row_padding) {
  std::vector<float> got, want;
  tril_ctx c{0, 0, 5, 8, 3, 0};
  c.full = true;
  const run_result r = run_tril(c, &got, &want);
  ASSERT_TRUE(r.ok()) << r.message;
  ASSERT_EQ(want.size(), 3u * 25u);
  EXPECT_EQ(got, want);
}

}  // namespace
}  // namespace kevolve::emu::mtia::testing
