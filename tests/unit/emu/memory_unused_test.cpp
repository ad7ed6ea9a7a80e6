// The memory counters: the bandwidth the busiest level left unused (in
// cycles at its peak), of it the cycles before the first transfer (its
// request latency) and after the last read. 64 programs that each read a
// tile, compute on it and store it keep the SRAM saturated while they read
// and store, so only those two ends go unused; every cycle of compute added
// after the read is a cycle unused after the last read.
#include <gtest/gtest.h>

#include "emu_test_util.h"

namespace kevolve::emu::mtia::testing {
namespace {

struct tile_ctx {
  uint64_t in, out;
  int passes;
};

// Every program: DMA a 4 KB tile in, `passes` SE copies, DMA it out.
void tile_program(kv_mtia_device* d, const void* u) {
  const tile_ctx& c = *static_cast<const tile_ctx*>(u);
  const uint64_t at = uint64_t(kv_mtia_program_id(d)) * 4096;
  const int a = kv_mtia_cb_alloc(d, 4096, 1), b = kv_mtia_cb_alloc(d, 4096, 1), e = kv_mtia_cb_alloc(d, 4096, 1);
  const int o = kv_mtia_cb_alloc(d, 4096, 1);  // one producer engine per buffer: a the DMA's, b, e, o the SE's
  kv_mtia_dma_in(d, a, kv_mtia_rows(c.in + at, 1, 4096, 4096));
  for (int i = 0; i < c.passes; ++i) {
    const int from = i == 0 ? a : i % 2 ? b : e, to = i + 1 == c.passes ? o : i % 2 ? e : b;
    kv_mtia_se_unary(d, KV_OP_COPY, from, KV_CB_POP, to, 32, 32, KV_F32, KV_F32, 1.0f, 0.0f);
  }
  kv_mtia_dma_out(d, kv_mtia_rows(c.out + at, 1, 4096, 4096), o, KV_CB_POP);
}

run_result run_tiles(level where, int passes, int programs) {
  device dev(mtia2i());
  const kv_tensor in = device_tensor(dev, where, {64, 1024}, KV_F32);
  const kv_tensor out = device_tensor(dev, where, {64, 1024}, KV_F32);
  tile_ctx c{addr_of(in), addr_of(out), passes};
  dev.begin_run();
  EXPECT_EQ(kv_mtia_launch(dev.handle(), programs, tile_program, &c), 0) << dev.current().message;
  return dev.end_run();
}

TEST(emu_memory_unused, the_first_request_and_compute_after_the_last_read_leave_the_bandwidth_unused) {
  const params p = mtia2i();
  for (const level where : {level::sram, level::dram}) {
    const run_result few = run_tiles(where, 4, 64), many = run_tiles(where, 24, 64);
    ASSERT_TRUE(few.ok()) << few.message;
    ASSERT_TRUE(many.ok()) << many.message;
    const double request = p.dma_descriptor_cycles + (where == level::sram ? p.sram_latency_cycles : p.dram_latency_cycles);
    // No byte moves before the first DMA's request is served.
    EXPECT_DOUBLE_EQ(few.mem_head_cycles, request);
    EXPECT_DOUBLE_EQ(many.mem_head_cycles, request);
    // 64 ports outrun the level while all PEs read or store: only the two ends go unused.
    EXPECT_NEAR(few.mem_unused_cycles, few.mem_head_cycles + few.mem_tail_cycles, 1e-6);
    // The tail holds at least the store's request; the added passes land in it, cycle for cycle.
    EXPECT_GT(few.mem_tail_cycles, request);
    EXPECT_GT(many.cycles, few.cycles);
    EXPECT_NEAR(many.mem_tail_cycles - few.mem_tail_cycles, many.cycles - few.cycles, 1e-6);
    // Shares of the whole run, launch included.
    EXPECT_NEAR(many.mem_unused, many.mem_unused_cycles / many.cycles, 1e-12);
    EXPECT_GT(many.mem_tail, few.mem_tail);
  }
  // One program reads at its 64 B/cycle port, 1/31 of the SRAM's 2000: the
  // bandwidth goes almost all unused while it moves bytes, though something moves.
  const run_result one = run_tiles(level::sram, 4, 1);
  ASSERT_TRUE(one.ok()) << one.message;
  const double moving = one.cycles - p.launch_cycles - one.mem_head_cycles - one.mem_tail_cycles;
  EXPECT_GT(moving, 0.0);
  EXPECT_GT(one.mem_unused_cycles - one.mem_head_cycles - one.mem_tail_cycles, 0.9 * moving);
}

}  // namespace
}  // namespace kevolve::emu::mtia::testing
