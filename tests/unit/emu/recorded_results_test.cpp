// The emulator's results pinned to values recorded before its speed work:
// emulated cycles (to the last bit of the double), per-engine busy cycles,
// stalls and bytes of a spread of GEMM variants on both profiles, and the
// exact output bits of every SE / vector-core op in every dtype. A faster
// emulator must not move a cycle or an output bit; a deliberate change of
// the timing model or the numerics updates these values in the same commit.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>

#include "gemm_setup.h"

namespace kevolve::emu::mtia::testing {
namespace {

// FNV-1a over the bits of the raw counters of a run.
struct hasher {
  uint64_t h = 1469598103934665603ull;
  void bytes(const void* p, size_t n) {
    const auto* b = static_cast<const uint8_t*>(p);
    for (size_t i = 0; i < n; ++i) h = (h ^ b[i]) * 1099511628211ull;
  }
  void num(double v) { bytes(&v, sizeof v); }
};

uint64_t counters_hash(const run_result& r) {
  hasher h;
  h.num(r.cycles);
  h.num(double(r.commands));
  h.num(double(r.issued));
  h.num(r.max_issue_cycles);
  for (double v : r.busy) h.num(v);
  for (double v : r.stalls) h.num(v);
  for (double v : {r.dram_read, r.dram_write, r.sram_read, r.sram_write, r.noc_bytes, r.macs, r.dpe_max_pe_busy})
    h.num(v);
  return h.h;
}

struct gemm_case {
  const char* name;
  bool mtia300;
  gemm_problem pr;
  tiles t;
  double cycles;
  uint64_t counters;
};

gemm_problem in_dram(gemm_problem p) {
  p.b_at = level::dram;
  return p;
}

TEST(emu_recorded, gemm_cycles_and_counters_match_the_recorded_values) {
  const gemm_case cases[] = {
      {"naive", false, {1024, 1024, 1024}, naive_tiles(32, 64, 128), 50240.400000000016, 0x7eb0fd5042ac8178ull},
      {"double_buffered",
       false,
       {1024, 1024, 1024},
       double_buffered_tiles(32, 64, 128),
       31621.008000000016,
       0x120d851ab36363e2ull},
      {"broadcast",
       false,
       {1024, 1024, 1024},
       broadcast_tiles(64, 128, 256),
       21449.864000000001,
       0xe8e07a3e092454b3ull},
      {"dram_streaming", false, in_dram({256, 4096, 1024}), naive_tiles(32, 64, 256), 475516.90682853473,
       0x29f30dc763930ad5ull},
      {"dram_resident_bcast", false, in_dram({256, 4096, 1024}), tiles{32, 64, 256, 3, 1, 1}, 61578.801353566814,
       0x5f2abfbcd8650b45ull},
      {"tiny", false, {64, 64, 64}, double_buffered_tiles(8, 16, 64), 1795.248, 0x458268595cd517d4ull},
      {"redundant", false, {512, 512, 512}, tiles{32, 64, 128, 2, 1, 0, 1}, 6344.0800000000008, 0xe423a308ecaa9ca6ull},
      {"mtia300_broadcast",
       true,
       {1152, 1024, 1024},
       broadcast_tiles(32, 128, 256),
       13666.246388402747,
       0x99ef1d2685739d48ull},
      {"mtia300_dram", true, in_dram({288, 4096, 1024}), tiles{24, 64, 256, 3, 1, 1}, 14555.383015144114,
       0x3b673192c4644c74ull},
  };
  for (const gemm_case& c : cases) {
    device dev(c.mtia300 ? mtia300() : mtia2i());
    const gemm_run r = run_gemm(dev, c.pr, c.t, false);
    ASSERT_TRUE(r.result.ok()) << c.name << ": " << r.result.message;
    ASSERT_EQ(r.result.launches, 1) << c.name;
    const uint64_t counters = counters_hash(r.result);
    EXPECT_EQ(r.result.cycles, c.cycles) << c.name;
    EXPECT_EQ(counters, c.counters) << c.name;
    if (r.result.cycles != c.cycles || counters != c.counters)
      std::printf("  {\"%s\", ..., %.17g, 0x%016llxull},\n", c.name, r.result.cycles,
                  static_cast<unsigned long long>(counters));
  }
}

TEST(emu_recorded, functional_gemm_output_bits_match_the_recorded_values) {
  device dev(mtia2i());
  const gemm_problem pr{128, 192, 256};
  dev.free_all();
  const auto a = random_f16(size_t(pr.m) * pr.k, 11), b = random_f16(size_t(pr.k) * pr.n, 12);
  const kv_tensor ta = device_tensor(dev, level::sram, {pr.m, pr.k}, KV_F16, a.data());
  const kv_tensor tb = device_tensor(dev, level::dram, {pr.k, pr.n}, KV_F16, b.data());
  const kv_tensor tc = device_tensor(dev, level::sram, {pr.m, pr.n}, KV_F16);
  args_builder ab;
  ab.in(ta)
      .in(tb)
      .out(tc)
      .param("mb", 16)
      .param("nb", 32)
      .param("kb", 64)
      .param("slots", 2)
      .param("bcast", 1)
      .param("resident_a", 0);
  const run_result r = run_kernel(dev, gemm_kernel, ab.a);
  ASSERT_TRUE(r.ok()) << r.message;
  hasher h;
  h.bytes(dev.host(addr_of(tc), uint64_t(pr.m) * pr.n * 2), size_t(pr.m) * pr.n * 2);
  EXPECT_EQ(r.cycles, 3003.0596980747405);
  EXPECT_EQ(h.h, 0xf00b7f9ae61a5a7full);
}

struct op_case {
  uint64_t x, y, out;
  int32_t engine_vec, op, bcast, rows, cols, in_dtype, out_dtype;
};

// One engine op on inputs DMA'd in, its output DMA'd out.
void op_program(kv_mtia_device* d, const void* u) {
  const op_case& c = *static_cast<const op_case*>(u);
  const int isz = c.in_dtype == KV_F32 || c.in_dtype == KV_I32 ? 4 : 2;
  const int osz = c.out_dtype == KV_F32 || c.out_dtype == KV_I32 ? 4 : 2;
  const int n = c.rows * c.cols, yn = c.bcast == KV_Y_ROW ? c.cols : c.bcast == KV_Y_COL ? c.rows : n;
  const bool reduce = c.op == KV_OP_SUM || c.op == KV_OP_RMAX, binary = c.op >= KV_OP_ADD && c.op <= KV_OP_DIV;
  const int out_n = reduce ? c.rows : n;
  const int cx = kv_mtia_cb_alloc(d, n * isz, 1), cy = kv_mtia_cb_alloc(d, yn * isz, 1);
  const int co = kv_mtia_cb_alloc(d, out_n * osz, 1);
  kv_mtia_dma_in(d, cx, kv_mtia_rows(c.x, 1, n * isz, n * isz));
  if (binary) kv_mtia_dma_in(d, cy, kv_mtia_rows(c.y, 1, yn * isz, yn * isz));
  d->api->elementwise(d, c.engine_vec, c.op, cx, 0, binary ? cy : -1, 0, c.bcast, co, c.rows, c.cols, c.in_dtype,
                      c.out_dtype, c.op < KV_OP_ADD ? 1.5f : 1.0f, c.op < KV_OP_ADD ? 0.25f : 0.0f);
  kv_mtia_dma_out(d, kv_mtia_rows(c.out, 1, out_n * osz, out_n * osz), co, 0);
}

// Every SE and vector-core op, every dtype pair, every broadcast, on two
// shapes (one with ragged rows): output bits and cycles of all runs hashed.
TEST(emu_recorded, engine_op_output_bits_match_the_recorded_values) {
  device dev(mtia2i());
  const int32_t floats[] = {KV_F32, KV_F16, KV_BF16};
  const int32_t ops[] = {KV_OP_COPY, KV_OP_RELU, KV_OP_NEG,   KV_OP_SQUARE, KV_OP_EXP, KV_OP_GELU, KV_OP_SIGMOID,
                         KV_OP_SILU, KV_OP_TANH, KV_OP_RSQRT, KV_OP_RECIP,  KV_OP_LOG, KV_OP_ADD,  KV_OP_SUB,
                         KV_OP_MUL,  KV_OP_MAX,  KV_OP_MIN,   KV_OP_DIV,    KV_OP_SUM, KV_OP_RMAX, KV_OP_CUMSUM};
  const int shapes[][2] = {{3, 37}, {2, 64}};
  std::vector<op_case> cases;
  for (int vec_core = 0; vec_core < 2; ++vec_core)
    for (int32_t op : ops)
      for (const auto& sh : shapes)
        for (int bc = 0; bc < (op >= KV_OP_ADD && op <= KV_OP_DIV ? 3 : 1); ++bc) {
          if (op == KV_OP_CUMSUM && !vec_core) continue;
          for (int32_t idt : floats)
            for (int32_t odt : floats) cases.push_back({0, 0, 0, vec_core, op, bc, sh[0], sh[1], idt, odt});
          const bool int_op = op == KV_OP_COPY || op == KV_OP_NEG || op == KV_OP_RELU || op >= KV_OP_ADD;
          if (vec_core && int_op) cases.push_back({0, 0, 0, 1, op, bc, sh[0], sh[1], KV_I32, KV_I32});
        }
  hasher h;
  for (op_case& c : cases) {
    dev.free_all();
    std::string err;
    c.x = dev.alloc(level::sram, 64 * 4 * 3, &err);
    c.y = dev.alloc(level::sram, 64 * 4 * 3, &err);
    c.out = dev.alloc(level::sram, 64 * 4 * 3, &err);
    for (uint64_t base : {c.x, c.y}) {
      uint8_t* p = dev.host(base, 64 * 4 * 3);
      for (int i = 0; i < 64 * 3; ++i) {
        const float v = std::sin(0.7f * float(i) + float(base % 7)) * 3.0f + (base == c.y ? 0.5f : 0.0f);
        if (c.in_dtype == KV_F32)
          std::memcpy(p + 4 * i, &v, 4);
        else if (c.in_dtype == KV_I32) {
          const int32_t iv = int32_t(v * 1000);
          std::memcpy(p + 4 * i, &iv, 4);
        } else {
          const uint16_t b = c.in_dtype == KV_F16 ? kv_f32_to_f16(v) : kv_f32_to_bf16(v);
          std::memcpy(p + 2 * i, &b, 2);
        }
      }
    }
    dev.begin_run();
    ASSERT_EQ(kv_mtia_launch(dev.handle(), 1, op_program, &c), 0) << dev.current().message;
    const run_result r = dev.end_run();
    ASSERT_TRUE(r.ok()) << r.message;
    h.num(r.cycles);
    h.bytes(dev.host(c.out, 64 * 4 * 3), 64 * 4 * 3);
  }
  EXPECT_EQ(cases.size(), 1218u);
  EXPECT_EQ(h.h, 0xdf3be63667ac2faeull);
}

struct dpe_ctx {
  uint64_t a, b, bias, rows, out_mm, out_acc;
};

// bf16 matmul drained through bias + GELU to bf16; SE row-accumulate of
// fp16 rows to fp32 and of bf16 rows to bf16.
void dpe_program(kv_mtia_device* d, const void* u) {
  const dpe_ctx& c = *static_cast<const dpe_ctx*>(u);
  const int ca = kv_mtia_cb_alloc(d, 24 * 40 * 2, 1), cb = kv_mtia_cb_alloc(d, 40 * 48 * 2, 1);
  const int cbias = kv_mtia_cb_alloc(d, 48 * 4, 1), co = kv_mtia_cb_alloc(d, 24 * 48 * 2, 1);
  const int cr = kv_mtia_cb_alloc(d, 5 * 48 * 2, 2), cs = kv_mtia_cb_alloc(d, 48 * 4, 2);
  const int acc = kv_mtia_acc_alloc(d, 24, 48);
  kv_mtia_dma_in(d, cb, kv_mtia_rows(c.b, 1, 40 * 48 * 2, 40 * 48 * 2));
  kv_mtia_dpe_load_b(d, cb, 40, 48, KV_BF16, 0);
  kv_mtia_dma_in(d, ca, kv_mtia_rows(c.a, 1, 24 * 40 * 2, 24 * 40 * 2));
  kv_mtia_dpe_mm(d, ca, 24, 40, 40, acc, KV_MM_ZERO | KV_CB_KEEP);
  kv_mtia_dpe_mm(d, ca, 24, 40, 40, acc, 0);
  kv_mtia_dma_in(d, cbias, kv_mtia_rows(c.bias, 1, 48 * 4, 48 * 4));
  kv_mtia_re_drain(d, acc, co, KV_BF16, KV_OP_GELU, cbias, 0);
  kv_mtia_dma_out(d, kv_mtia_rows(c.out_mm, 1, 24 * 48 * 2, 24 * 48 * 2), co, 0);
  for (int dt : {KV_F16, KV_BF16}) {
    kv_mtia_dma_in(d, cr, kv_mtia_rows(c.rows, 1, 5 * 48 * 2, 5 * 48 * 2));
    kv_mtia_se_row_accum(d, cr, 0, 5, 48, dt, cs, dt == KV_F16 ? KV_F32 : KV_BF16);
    kv_mtia_dma_out(
        d,
        kv_mtia_rows(c.out_acc + (dt == KV_F16 ? 0 : 256), 1, 48 * (dt == KV_F16 ? 4 : 2), 48 * (dt == KV_F16 ? 4 : 2)),
        cs, 0);
  }
}

TEST(emu_recorded, dpe_drain_and_row_accumulate_bits_match_the_recorded_values) {
  device dev(mtia2i());
  std::string err;
  const auto a = random_f16(24 * 40, 21), b = random_f16(40 * 48, 22), rows = random_f16(5 * 48, 23);
  std::vector<uint16_t> a16(a.size()), b16(b.size());
  for (size_t i = 0; i < a.size(); ++i) a16[i] = kv_f32_to_bf16(kv_f16_to_f32(a[i]));
  for (size_t i = 0; i < b.size(); ++i) b16[i] = kv_f32_to_bf16(kv_f16_to_f32(b[i]));
  std::vector<float> bias(48);
  for (int j = 0; j < 48; ++j) bias[j] = 0.05f * float(j) - 1.0f;
  const kv_tensor ta = device_tensor(dev, level::sram, {24, 40}, KV_BF16, a16.data());
  const kv_tensor tb = device_tensor(dev, level::sram, {40, 48}, KV_BF16, b16.data());
  const kv_tensor tbias = device_tensor(dev, level::sram, {48}, KV_F32, bias.data());
  const kv_tensor tr = device_tensor(dev, level::sram, {5, 48}, KV_F16, rows.data());
  const kv_tensor tmm = device_tensor(dev, level::sram, {24, 48}, KV_BF16);
  const kv_tensor tacc = device_tensor(dev, level::sram, {512}, KV_F32);
  const dpe_ctx c{addr_of(ta), addr_of(tb), addr_of(tbias), addr_of(tr), addr_of(tmm), addr_of(tacc)};
  dev.begin_run();
  ASSERT_EQ(kv_mtia_launch(dev.handle(), 1, dpe_program, &c), 0) << dev.current().message;
  const run_result r = dev.end_run();
  ASSERT_TRUE(r.ok()) << r.message;
  hasher h;
  h.num(r.cycles);
  h.bytes(dev.host(addr_of(tmm), 24 * 48 * 2), 24 * 48 * 2);
  h.bytes(dev.host(addr_of(tacc), 512 * 4), 512 * 4);
  EXPECT_EQ(h.h, 0x6072024b6db85c7aull);
}

}  // namespace
}  // namespace kevolve::emu::mtia::testing
