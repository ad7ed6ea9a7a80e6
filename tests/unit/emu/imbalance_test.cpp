// The load-imbalance counter: the share of PE time spent done while another
// PE of the launch still ran. Equal work on every PE gives none; one PE with
// four times the work leaves the other 63 idle for three quarters of the run.
#include <gtest/gtest.h>

#include "emu_test_util.h"

namespace kevolve::emu::mtia::testing {
namespace {

struct busy_ctx {
  uint64_t out;
  int passes;
  int heavy;  // program with four times the passes, -1: none
};

// `passes` SE copies between two local buffers, then one store per program.
void busy_program(kv_mtia_device* d, const void* u) {
  const busy_ctx& c = *static_cast<const busy_ctx*>(u);
  const int64_t pid = kv_mtia_program_id(d);
  const int n = pid == c.heavy ? 4 * c.passes : c.passes;
  const int a = kv_mtia_cb_alloc(d, 32 * 32 * 4, 1), b = kv_mtia_cb_alloc(d, 32 * 32 * 4, 1);
  const int o = kv_mtia_cb_alloc(d, 32 * 32 * 4, 1);  // read by the fabric port alone
  kv_mtia_se_fill(d, a, 32, 32, KV_F32, float(pid));
  for (int i = 0; i < n; ++i) {
    const int from = i % 2 ? b : a, to = i + 1 == n ? o : i % 2 ? a : b;
    kv_mtia_se_unary(d, KV_OP_COPY, from, KV_CB_POP, to, 32, 32, KV_F32, KV_F32, 1.0f, 0.0f);
  }
  kv_mtia_dma_out(d, kv_mtia_rows(c.out + uint64_t(pid) * 4096, 1, 4096, 4096), o, KV_CB_POP);
}

run_result run_busy(int heavy) {
  device dev(mtia2i());
  const kv_tensor out = device_tensor(dev, level::sram, {64, 1024}, KV_F32);
  busy_ctx c{addr_of(out), 40, heavy};
  dev.begin_run();
  EXPECT_EQ(kv_mtia_launch(dev.handle(), 64, busy_program, &c), 0) << dev.current().message;
  return dev.end_run();
}

TEST(emu_imbalance, equal_work_leaves_no_pe_idle_and_one_heavy_pe_leaves_the_rest_idle) {
  const run_result even = run_busy(-1);
  ASSERT_TRUE(even.ok()) << even.message;
  EXPECT_NEAR(even.imbalance, 0.0, 1e-9);
  const run_result skewed = run_busy(5);
  ASSERT_TRUE(skewed.ok()) << skewed.message;
  // 63 PEs done after about a quarter of the launch: 63/64 * 3/4 = 0.74.
  EXPECT_GT(skewed.imbalance, 0.6);
  EXPECT_LT(skewed.imbalance, 0.75);
  EXPECT_GT(skewed.cycles, even.cycles);
}

}  // namespace
}  // namespace kevolve::emu::mtia::testing
