// Bad kernels get a clear error result, never a crash: capacity overflows,
// misaligned or foreign addresses, deadlocks, misuse of the API.
#include <gtest/gtest.h>

#include "emu_test_util.h"

namespace kevolve::emu::mtia::testing {
namespace {

struct ctx {
  uint64_t buf;
  int what;
};

// One program per PE doing the misuse selected by `what`.
void misuse(kv_mtia_device* d, const void* u) {
  const ctx& c = *static_cast<const ctx*>(u);
  const int pid = kv_mtia_program_id(d);
  switch (c.what) {
    case 0: kv_mtia_cb_alloc(d, 200 * 1024, 2); break;  // 400 KiB > 384 KiB local memory
    case 1: {
      const int cb = kv_mtia_cb_alloc(d, 4096, 2);
      kv_mtia_dma_in(d, cb, kv_mtia_rows(c.buf + 16, 1, 64, 64));  // 16-byte offset
      break;
    }
    case 2: {
      const int cb = kv_mtia_cb_alloc(d, 4096, 2);
      kv_mtia_dma_in(d, cb, kv_mtia_rows(c.buf, 1, 2048, 2048));  // the buffer has 1024 bytes
      break;
    }
    case 3: {
      const int cb = kv_mtia_cb_alloc(d, 4096, 2);
      const int out = kv_mtia_cb_alloc(d, 4096, 2);
      kv_mtia_se_unary(d, KV_OP_RELU, cb, 0, out, 1, 16, KV_F32, KV_F32, 1, 0);  // nothing pushed to cb
      break;
    }
    case 4:
      if (pid != 3) kv_mtia_barrier(d);  // program 3 never arrives
      break;
    case 5: {
      const int acc = kv_mtia_acc_alloc(d, 8, 8);
      if (pid == 0) kv_mtia_re_recv(d, acc, KV_DIR_SOUTH, 1);  // nobody sends
      break;
    }
    case 6: kv_mtia_acc_alloc(d, 256, 256); break;  // 256 KiB > RE accumulators
    case 7: {
      const int cb = kv_mtia_cb_alloc(d, 128 * 1024, 1);
      kv_mtia_dma_in(d, cb, kv_mtia_rows(c.buf, 1, 64, 64));
      kv_mtia_dpe_load_b(d, cb, 256, 256, KV_F16, 0);  // 128 KiB > B-cache
      break;
    }
    case 8: {  // a slot that is never freed: reads keep, nobody pops, producer waits forever
      const int cb = kv_mtia_cb_alloc(d, 64, 1);
      const int out = kv_mtia_cb_alloc(d, 64, 4);
      for (int i = 0; i < 2; ++i) {
        kv_mtia_dma_in(d, cb, kv_mtia_rows(c.buf, 1, 64, 64));
        kv_mtia_se_unary(d, KV_OP_COPY, cb, KV_CB_KEEP, out, 1, 16, KV_F32, KV_F32, 1, 0);
      }
      break;
    }
    case 9: {
      const int cb = kv_mtia_cb_alloc(d, 64, 1);
      kv_mtia_dma_in(d, cb, kv_mtia_rows(c.buf, 1, 64, 64));
      kv_mtia_dma_out(d, kv_mtia_rows(c.buf, 1, 64, 64), cb, 0);
      kv_mtia_se_unary(d, KV_OP_COPY, cb, 0, cb, 1, 16, KV_F32, KV_F32, 1, 0);  // cb consumed by two engines
      break;
    }
    default: break;
  }
}

run_result run_misuse(const params& p, int what, int programs = 64) {
  device dev(p);
  std::string err;
  ctx c{dev.alloc(level::sram, 1024, &err), what};
  dev.begin_run();
  const int rc = kv_mtia_launch(dev.handle(), programs, misuse, &c);
  run_result r = dev.end_run();
  EXPECT_EQ(rc, r.status);
  return r;
}

TEST(emu_errors, each_misuse_is_a_clear_error_result) {
  const struct {
    int what;
    int status;
    const char* words;
  } cases[] = {
      {0, KV_MTIA_ERR_CAPACITY, "local memory overflow"},
      {1, KV_MTIA_ERR_ALIGN, "multiples of 32 bytes"},
      {2, KV_MTIA_ERR_ADDRESS, "not inside one device allocation"},
      {3, KV_MTIA_ERR_DEADLOCK, "is empty"},
      {4, KV_MTIA_ERR_DEADLOCK, "wait for each other forever"},
      {5, KV_MTIA_ERR_DEADLOCK, "wait for each other forever"},
      {6, KV_MTIA_ERR_CAPACITY, "the RE holds"},
      {7, KV_MTIA_ERR_CAPACITY, "B-cache"},
      {8, KV_MTIA_ERR_DEADLOCK, "waits forever"},
      {9, KV_MTIA_ERR_ARG, "one consumer engine"},
  };
  for (const auto& c : cases) {
    const run_result r = run_misuse(mtia2i(), c.what);
    EXPECT_EQ(r.status, c.status) << c.what << ": " << r.message;
    EXPECT_NE(r.message.find(c.words), std::string::npos) << c.what << ": " << r.message;
    EXPECT_FALSE(r.ok());
  }
}

TEST(emu_errors, unaligned_dma_is_allowed_on_the_mtia300_profile) {
  EXPECT_EQ(run_misuse(mtia2i(), 1).status, KV_MTIA_ERR_ALIGN);
  const run_result r = run_misuse(mtia300(), 1);
  EXPECT_TRUE(r.ok()) << r.message;
  EXPECT_GT(r.sram_read, 64.0 * 72);  // charged in whole granules: 16 + 64 bytes -> 96 per PE
}

TEST(emu_errors, sram_overflow_and_intrinsics_outside_a_program) {
  device dev(mtia2i());
  std::string err;
  EXPECT_EQ(dev.alloc(level::sram, uint64_t(300) << 20, &err), 0u);
  EXPECT_NE(err.find("sram overflow"), std::string::npos) << err;
  dev.begin_run();
  EXPECT_LT(kv_mtia_cb_alloc(dev.handle(), 64, 1), 0);
  const run_result r = dev.end_run();
  EXPECT_EQ(r.status, KV_MTIA_ERR_STATE);
  EXPECT_NE(r.message.find("outside a program"), std::string::npos);
}

TEST(emu_errors, an_error_is_sticky_and_the_next_run_starts_clean) {
  device dev(mtia2i());
  std::string err;
  ctx c{dev.alloc(level::sram, 1024, &err), 0};
  dev.begin_run();
  EXPECT_EQ(kv_mtia_launch(dev.handle(), 64, misuse, &c), KV_MTIA_ERR_CAPACITY);
  c.what = -1;
  EXPECT_EQ(kv_mtia_launch(dev.handle(), 64, misuse, &c), KV_MTIA_ERR_CAPACITY);  // still failed
  EXPECT_FALSE(dev.end_run().ok());
  dev.begin_run();
  EXPECT_EQ(kv_mtia_launch(dev.handle(), 64, misuse, &c), KV_MTIA_OK);
  const run_result r = dev.end_run();
  EXPECT_TRUE(r.ok()) << r.message;
  EXPECT_EQ(r.cycles, dev.config().launch_cycles);  // an empty launch costs the launch
}

// A kernel sizes its tiles from the queried capacities: accumulators that
// fill exactly KV_MTIA_Q_ACC_BYTES fit, one fp32 row more overflows (both
// profiles), and KV_MTIA_Q_LS_BYTES is the profile's local memory.
void fill_accumulators(kv_mtia_device* d, const void* u) {
  const int extra = *static_cast<const int*>(u);
  const int32_t bytes = kv_mtia_query(d, KV_MTIA_Q_ACC_BYTES), cols = 64;
  kv_mtia_acc_alloc(d, bytes / (4 * cols) / 2, cols);
  kv_mtia_acc_alloc(d, bytes / (4 * cols) / 2 + extra, cols);
}

TEST(emu_errors, accumulator_capacity_is_queryable) {
  for (const auto& p : {mtia2i(), mtia300()}) {
    device dev(p);
    for (int extra : {0, 1}) {
      dev.begin_run();
      EXPECT_EQ(kv_mtia_query(dev.handle(), KV_MTIA_Q_ACC_BYTES), int32_t(p.re_acc_bytes));
      EXPECT_EQ(kv_mtia_query(dev.handle(), KV_MTIA_Q_LS_BYTES), int32_t(p.ls_bytes));
      kv_mtia_launch(dev.handle(), 64, fill_accumulators, &extra);
      const run_result r = dev.end_run();
      if (extra == 0) {
        EXPECT_TRUE(r.ok()) << r.message;
      } else {
        EXPECT_EQ(r.status, KV_MTIA_ERR_CAPACITY) << r.message;
      }
    }
  }
}

}  // namespace
}  // namespace kevolve::emu::mtia::testing
