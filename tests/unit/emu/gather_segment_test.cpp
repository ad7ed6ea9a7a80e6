// The gather/segment intrinsics: scalar-core peeks and pushes, the SE fill,
// the RE's segmented row-accumulate and the padded, unaligned indexed
// gather, against plain CPU references; their errors; and the timing
// invariants (no roofline floor beaten, bigger never faster, more bandwidth
// never slower, a redundant peek never helps, cycle-exact repeats) on an
// embedding-bag kernel that steers its DMAs by the offsets it reads.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>

#include "emu_test_util.h"

namespace kevolve::emu::mtia::testing {
namespace {

// ---- an embedding-bag kernel: per block of `block` bags, the scalar core
// peeks the offsets, pushes the bag boundaries, and the index runs are
// gathered and summed per bag on the RE.
struct bag_ctx {
  uint64_t table, idx, off, out;
  int64_t rows, dim, bags, block;
  int redundant_peeks = 0;
  bool prefetch = false;
};

void bag_program(kv_mtia_device* d, const void* u) {
  const bag_ctx& c = *static_cast<const bag_ctx*>(u);
  const int64_t per = (c.bags / c.block + kv_mtia_num_programs(d) - 1) / kv_mtia_num_programs(d) * c.block;
  const int64_t b0 = kv_mtia_program_id(d) * per, b1 = std::min(b0 + per, c.bags);
  if (b0 >= b1) return;
  const int rb = int(c.dim * 4), gmax = 64;
  const int off = kv_mtia_cb_alloc(d, int(c.block + 1) * 8, 2), seg = kv_mtia_cb_alloc(d, int(c.block + 1) * 8, 2);
  const int ids = kv_mtia_cb_alloc(d, gmax * 8, 2), rows = kv_mtia_cb_alloc(d, gmax * rb, 2);
  const int out = kv_mtia_cb_alloc(d, int(c.block) * rb, 2), acc = kv_mtia_acc_alloc(d, int(c.block), int(c.dim));
  auto load = [&](int64_t s) { kv_mtia_dma_in(d, off, kv_mtia_rows(c.off + s * 8, 1, (c.block + 1) * 8, 0)); };
  if (c.prefetch) load(b0);
  for (int64_t s = b0; s < b1; s += c.block) {
    if (!c.prefetch) load(s);
    else if (s + c.block < b1) load(s + c.block);
    int64_t bound[65], extra = 0;
    for (int64_t i = 0; i <= c.block; ++i) kv_mtia_sc_peek_int(d, off, KV_I64, i, KV_CB_KEEP, &bound[i]);
    for (int i = 0; i < c.redundant_peeks; ++i) kv_mtia_sc_peek_int(d, off, KV_I64, i % c.block, KV_CB_KEEP, &extra);
    kv_mtia_sc_peek_int(d, off, KV_I64, 0, KV_CB_POP, &extra);
    kv_mtia_sc_push_int(d, seg, KV_I64, bound, int(c.block + 1));
    kv_mtia_segments sg = {seg, KV_CB_KEEP, KV_I64, 0, int(c.block)};
    const int64_t q0 = bound[0] - bound[0] % 4;  // no block is empty (see run_bags)
    for (int64_t q = q0; q < bound[c.block]; q += gmax) {
      const int64_t n = std::min<int64_t>(gmax, bound[c.block] - q);
      kv_mtia_dma_in(d, ids, kv_mtia_rows(c.idx + q * 8, 1, n * 8, 0));
      kv_mtia_dma_gather(d, rows, c.table, c.rows, rb, rb, ids, int(n), KV_I64, 0);
      if (q + gmax >= bound[c.block]) sg.flags = KV_CB_POP;
      kv_mtia_re_segment_sum(d, rows, 0, int(n), int(c.dim), KV_F32, q, &sg, acc, q == q0 ? KV_MM_ZERO : 0u);
    }
    kv_mtia_re_drain(d, acc, out, KV_F32, KV_OP_COPY, -1, 0);
    kv_mtia_dma_out(d, kv_mtia_rows(c.out + s * rb, 1, c.block * rb, 0), out, 0);
  }
}

struct bag_problem {
  int64_t rows = 4096, dim = 64, bags = 1024, pool = 20, block = 16;
  level at = level::sram;
};

struct bag_run {
  run_result r;
  std::vector<float> out, ref;
  double bytes = 0;  // every byte the problem must move at least: indices, offsets, gathered rows, output
};

bag_run run_bags(const params& p, const bag_problem& pr, bag_ctx knobs = {}, bool functional = true) {
  device dev(p);
  std::vector<float> table(size_t(pr.rows * pr.dim));
  for (size_t i = 0; i < table.size(); ++i) table[i] = float(int(i % 97) - 48) / 16.0f;
  std::vector<int64_t> off(size_t(pr.bags + 1)), idx;
  for (int64_t b = 0; b < pr.bags; ++b) {
    const int64_t len = (b * 7919) % (2 * pr.pool + 1);  // 0 .. 2*pool: empty bags, never a whole empty block
    off[size_t(b + 1)] = off[size_t(b)] + len;
    for (int64_t k = 0; k < len; ++k) idx.push_back((b * 31 + k * 977) % pr.rows);
  }
  bag_run run;
  run.ref.assign(size_t(pr.bags * pr.dim), 0.0f);
  for (int64_t b = 0; b < pr.bags; ++b)
    for (int64_t k = off[size_t(b)]; k < off[size_t(b + 1)]; ++k)
      for (int64_t j = 0; j < pr.dim; ++j) run.ref[size_t(b * pr.dim + j)] += table[size_t(idx[size_t(k)] * pr.dim + j)];
  const kv_tensor tt = device_tensor(dev, pr.at, {pr.rows, pr.dim}, KV_F32, table.data());
  const kv_tensor ti = device_tensor(dev, pr.at, {int64_t(idx.size())}, KV_I64, idx.data());
  const kv_tensor to = device_tensor(dev, pr.at, {pr.bags + 1}, KV_I64, off.data());
  const kv_tensor ty = device_tensor(dev, pr.at, {pr.bags, pr.dim}, KV_F32);
  run.bytes = double(idx.size()) * (8 + pr.dim * 4) + double(pr.bags + 1) * 8 + double(pr.bags * pr.dim * 4);
  bag_ctx c = knobs;
  c.table = addr_of(tt), c.idx = addr_of(ti), c.off = addr_of(to), c.out = addr_of(ty);
  c.rows = pr.rows, c.dim = pr.dim, c.bags = pr.bags, c.block = pr.block;
  dev.set_functional(functional);
  dev.begin_run();
  kv_mtia_launch(dev.handle(), p.pes(), bag_program, &c);
  run.r = dev.end_run();
  const auto* y = reinterpret_cast<const float*>(dev.host(addr_of(ty), uint64_t(pr.bags * pr.dim * 4)));
  run.out.assign(y, y + pr.bags * pr.dim);
  return run;
}

TEST(emu_gather_segment, embedding_bags_from_peeked_offsets_match_the_reference) {
  const bag_run r = run_bags(mtia2i(), bag_problem{});
  ASSERT_TRUE(r.r.ok()) << r.r.message;
  EXPECT_TRUE(r.r.data_dependent);
  for (size_t i = 0; i < r.ref.size(); ++i) ASSERT_NEAR(r.out[i], r.ref[i], 1e-4) << i;
  EXPECT_GT(r.r.utilisation[re], 0);
}

TEST(emu_gather_segment, a_timing_only_run_of_a_data_dependent_kernel_asks_for_arithmetic) {
  const bag_run r = run_bags(mtia2i(), bag_problem{}, {}, false);
  EXPECT_EQ(r.r.status, KV_MTIA_ERR_STATE);
  EXPECT_TRUE(r.r.needs_functional);
  EXPECT_NE(r.r.message.find("depend on data"), std::string::npos) << r.r.message;
}

TEST(emu_gather_segment, no_run_beats_the_bandwidth_floor_and_prefetching_offsets_helps) {
  const params p = mtia2i();
  for (level at : {level::sram, level::dram}) {
    bag_problem pr;
    pr.at = at;
    pr.block = 4;  // four blocks per program
    bag_ctx ahead{};
    ahead.prefetch = true;
    const bag_run slow = run_bags(p, pr), fast = run_bags(p, pr, ahead);
    for (const bag_run* r : {&slow, &fast}) {
      ASSERT_TRUE(r->r.ok()) << r->r.message;
      const double bw = at == level::sram ? p.sram_bytes_per_cycle : p.dram_effective_bytes_per_cycle();
      EXPECT_GE(r->r.cycles, r->bytes / bw + p.launch_cycles);
      EXPECT_GE(r->r.cycles, r->r.lower_bound_cycles(p));
    }
    // the peeks of a prefetched block no longer wait for the gathers ahead of its DMA
    EXPECT_LT(fast.r.cycles, slow.r.cycles);
  }
}

TEST(emu_gather_segment, bigger_is_never_faster_and_redundant_peeks_never_help) {
  const params p = mtia2i();
  double last = 0;
  for (int64_t bags : {256, 512, 1024, 2048}) {
    bag_problem pr;
    pr.bags = bags;
    const double c = run_bags(p, pr).r.cycles;
    EXPECT_GE(c, last) << bags;
    last = c;
  }
  bag_ctx extra{};
  extra.redundant_peeks = 8;
  EXPECT_GE(run_bags(p, bag_problem{}, extra).r.cycles, run_bags(p, bag_problem{}).r.cycles);
}

TEST(emu_gather_segment, more_bandwidth_or_cheaper_scalar_access_never_slows_it_and_runs_repeat) {
  const params base = mtia2i();
  const double c0 = run_bags(base, bag_problem{}).r.cycles;
  EXPECT_EQ(run_bags(base, bag_problem{}).r.cycles, c0);
  const std::pair<double params::*, double> faster[] = {
      {&params::sram_bytes_per_cycle, 1.5}, {&params::fi_bytes_per_cycle, 1.5}, {&params::re_bytes_per_cycle, 1.5},
      {&params::sram_latency_cycles, 0.5},  {&params::sc_load_cycles, 0.5},     {&params::sc_store_cycles, 0.5},
      {&params::re_segment_cycles, 0.5},    {&params::issue_cycles, 0.5}};
  for (const auto& [field, scale] : faster) {
    params p = base;
    p.*field *= scale;
    EXPECT_LE(run_bags(p, bag_problem{}).r.cycles, c0 * (1 + 1e-12));
  }
}

// ---- single intrinsics ----
struct one_ctx {
  uint64_t in, out;
  int what;
};

void one_program(kv_mtia_device* d, const void* u) {
  const one_ctx& c = *static_cast<const one_ctx*>(u);
  if (kv_mtia_program_id(d) != 0) return;
  const int a = kv_mtia_cb_alloc(d, 256, 1), b = kv_mtia_cb_alloc(d, 256, 1);
  int64_t v = 0;
  switch (c.what) {
    case 0:  // a peek beyond the bytes the DMA wrote
      kv_mtia_dma_in(d, a, kv_mtia_rows(c.in, 1, 32, 0));
      kv_mtia_sc_peek_int(d, a, KV_I64, 4, KV_CB_KEEP, &v);
      break;
    case 1:  // a peek of an empty buffer
      kv_mtia_sc_peek_int(d, a, KV_I64, 0, KV_CB_KEEP, &v);
      break;
    case 2:  // popping a buffer an engine consumes
      kv_mtia_dma_in(d, a, kv_mtia_rows(c.in, 1, 64, 0));
      kv_mtia_dma_out(d, kv_mtia_rows(c.out, 1, 64, 0), a, KV_CB_KEEP);
      kv_mtia_sc_peek_int(d, a, KV_I64, 0, KV_CB_POP, &v);
      break;
    case 3: {  // push, fill and an unaligned padded gather
      const int64_t vals[4] = {7, -1, 1 << 20, 3};
      kv_mtia_sc_push_int(d, a, KV_I32, vals, 4);
      kv_mtia_dma_out(d, kv_mtia_rows(c.out, 1, 16, 0), a, 0);
      kv_mtia_se_fill(d, b, 2, 4, KV_F32, 2.5f);
      kv_mtia_dma_out(d, kv_mtia_rows(c.out + 32, 1, 32, 0), b, 0);
      const int ids = kv_mtia_cb_alloc(d, 64, 1), rows = kv_mtia_cb_alloc(d, 64, 1);
      const int64_t sel[3] = {2, -5, 0};
      kv_mtia_sc_push_int(d, ids, KV_I64, sel, 3);
      kv_mtia_dma_gather(d, rows, c.in, 5, 12, 12, ids, 3, KV_I64, KV_GATHER_ZERO_NEG);  // 12-byte rows
      kv_mtia_dma_out(d, kv_mtia_rows(c.out + 64, 1, 36, 0), rows, 0);
      break;
    }
    case 4: {  // boundaries that decrease
      const int64_t bnd[3] = {0, 2, 1};
      kv_mtia_sc_push_int(d, b, KV_I64, bnd, 3);
      kv_mtia_dma_in(d, a, kv_mtia_rows(c.in, 1, 32, 0));
      const int acc = kv_mtia_acc_alloc(d, 2, 4);
      kv_mtia_segments s = {b, 0, KV_I64, 0, 2};
      kv_mtia_re_segment_sum(d, a, 0, 2, 4, KV_F32, 0, &s, acc, KV_MM_ZERO);
      break;
    }
    case 5: {  // a value that does not fit KV_I32
      const int64_t big = int64_t(1) << 40;
      kv_mtia_sc_push_int(d, a, KV_I32, &big, 1);
      break;
    }
  }
}

run_result run_one(int what, device& dev, uint64_t in, uint64_t out) {
  one_ctx c{in, out, what};
  dev.begin_run();
  kv_mtia_launch(dev.handle(), 1, one_program, &c);
  return dev.end_run();
}

TEST(emu_gather_segment, pushes_fills_and_padded_unaligned_gathers_write_what_they_say) {
  device dev(mtia2i());
  std::vector<float> in(15);
  for (int i = 0; i < 15; ++i) in[size_t(i)] = float(i);
  const kv_tensor ti = device_tensor(dev, level::sram, {15}, KV_F32, in.data());
  const kv_tensor to = device_tensor(dev, level::sram, {64}, KV_F32);
  const run_result r = run_one(3, dev, addr_of(ti), addr_of(to));
  ASSERT_TRUE(r.ok()) << r.message;
  const auto* o = reinterpret_cast<const uint8_t*>(dev.host(addr_of(to), 256));
  int32_t ints[4];
  std::memcpy(ints, o, 16);
  EXPECT_EQ(ints[0], 7);
  EXPECT_EQ(ints[1], -1);
  EXPECT_EQ(ints[2], 1 << 20);
  float f[8], g[9];
  std::memcpy(f, o + 32, 32);
  for (float x : f) EXPECT_EQ(x, 2.5f);
  std::memcpy(g, o + 64, 36);
  const float want[9] = {6, 7, 8, 0, 0, 0, 0, 1, 2};  // rows 2, padding, 0 of 3-float rows
  for (int i = 0; i < 9; ++i) EXPECT_EQ(g[i], want[i]) << i;
}

TEST(emu_gather_segment, scalar_and_segment_misuse_is_a_clear_error) {
  device dev(mtia2i());
  std::vector<int64_t> in(32, 1);
  const kv_tensor ti = device_tensor(dev, level::sram, {32}, KV_I64, in.data());
  const kv_tensor to = device_tensor(dev, level::sram, {32}, KV_I64);
  const struct {
    int what, status;
    const char* says;
  } cases[] = {{0, KV_MTIA_ERR_ARG, "outside the 32 bytes its producer wrote"},
               {1, KV_MTIA_ERR_DEADLOCK, "is empty"},
               {2, KV_MTIA_ERR_ARG, "peek it with KV_CB_KEEP"},
               {4, KV_MTIA_ERR_ARG, "must not decrease"},
               {5, KV_MTIA_ERR_ARG, "does not fit KV_I32"}};
  for (const auto& k : cases) {
    const run_result r = run_one(k.what, dev, addr_of(ti), addr_of(to));
    EXPECT_EQ(r.status, k.status) << k.what << ": " << r.message;
    EXPECT_NE(r.message.find(k.says), std::string::npos) << k.what << ": " << r.message;
  }
}

}  // namespace
}  // namespace kevolve::emu::mtia::testing
