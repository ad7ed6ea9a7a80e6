// Emulator speed: emulated engine commands per second on one host core
// (issue 6 target: >= 1e7/s, so that a search step costs seconds).
//
// Each workload is timed end to end (intrinsic calls with their checks and
// dependency bookkeeping, the arithmetic when on, trace recording and the
// event-driven timing replay), median of several runs, with the spread and
// the user CPU time (less sensitive to other jobs on a shared machine):
//   stream/timing      64 programs x STEPS x (256-byte DMA in, SE RELU of 64
//                      fp32, DMA out), arithmetic off (timing-only mode)
//   stream/functional  the same with the arithmetic on
//   softmax/functional the shipped row-norm template's softmax chain on bf16
//                      rows of 64: DMA in, widen to fp32, RMAX, SUB (per-row
//                      broadcast), EXP (LUT), SUM, DIV (per-row broadcast,
//                      rounded to bf16), DMA out; 2 rows (128 elements) a command
//   gemm_tile/functional fp16 GEMM on 32x32 DPE tiles: per k block DMA in a
//                      32x32 B tile and an 8x32 A tile, load B, 8x32x32 matmul;
//                      per output tile a drain through the SE (bias + ReLU to
//                      fp16) and DMA out
//   gemm/timing        the 512x26592x2048 weight-in-DRAM GEMM kernel (87k
//                      commands, 1M MACs each), timing-only
// Every workload's emulated cycle count is printed and, at the default STEPS,
// compared with the value recorded before the emulator's speed work: a
// faster emulator must time every kernel to the same cycle.
//
//   kevolve-bench-emu [STEPS [WORKLOAD...]]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

#include "emu/mtia/device.h"
#include "kevolve/mtia.h"

using namespace kevolve::emu::mtia;

namespace {

struct stream_ctx {
  uint64_t in, out;
  int steps;
};

void stream_program(kv_mtia_device* d, const void* u) {
  const stream_ctx& c = *static_cast<const stream_ctx*>(u);
  const int pid = kv_mtia_program_id(d);
  const int a = kv_mtia_cb_alloc(d, 256, 2), b = kv_mtia_cb_alloc(d, 256, 2);
  const uint64_t in = c.in + uint64_t(pid) * 256, out = c.out + uint64_t(pid) * 256;
  for (int s = 0; s < c.steps; ++s) {
    kv_mtia_dma_in(d, a, kv_mtia_rows(in, 1, 256, 256));
    kv_mtia_se_unary(d, KV_OP_RELU, a, 0, b, 1, 64, KV_F32, KV_F32, 1.0f, 0.0f);
    kv_mtia_dma_out(d, kv_mtia_rows(out, 1, 256, 256), b, 0);
  }
}

// Softmax over rows of 64 bf16: each program cycles over its own band of
// 16 rows, 2 rows per chunk, double-buffered.
constexpr int sm_cols = 64, sm_chunk = 2, sm_band = 16;

struct softmax_ctx {
  uint64_t x, y;
  int chunks;
};

void softmax_program(kv_mtia_device* d, const void* u) {
  const softmax_ctx& c = *static_cast<const softmax_ctx*>(u);
  const int pid = kv_mtia_program_id(d);
  const int io = sm_chunk * sm_cols * 2, f = sm_chunk * sm_cols * 4;
  const int cb_x = kv_mtia_cb_alloc(d, io, 2), cb_y = kv_mtia_cb_alloc(d, io, 2);
  const int cb_xf = kv_mtia_cb_alloc(d, f, 2), cb_t = kv_mtia_cb_alloc(d, f, 2), cb_u = kv_mtia_cb_alloc(d, f, 2);
  const int cb_s = kv_mtia_cb_alloc(d, 32, 2), cb_r = kv_mtia_cb_alloc(d, 32, 2);
  const uint64_t band = uint64_t(pid) * sm_band * sm_cols * 2;
  for (int i = 0; i < c.chunks; ++i) {
    const uint64_t off = band + uint64_t(i % (sm_band / sm_chunk)) * io;
    kv_mtia_dma_in(d, cb_x, kv_mtia_rows(c.x + off, 1, io, io));
    kv_mtia_se_unary(d, KV_OP_COPY, cb_x, KV_CB_POP, cb_xf, sm_chunk, sm_cols, KV_BF16, KV_F32, 1.0f, 0.0f);
    kv_mtia_se_binary(d, KV_OP_RMAX, cb_xf, KV_CB_KEEP, -1, 0, 0, cb_s, sm_chunk, sm_cols, KV_F32, KV_F32);
    kv_mtia_se_binary(d, KV_OP_SUB, cb_xf, KV_CB_POP, cb_s, KV_CB_POP, KV_Y_COL, cb_t, sm_chunk, sm_cols, KV_F32,
                      KV_F32);
    kv_mtia_se_unary(d, KV_OP_EXP, cb_t, KV_CB_POP, cb_u, sm_chunk, sm_cols, KV_F32, KV_F32, 1.0f, 0.0f);
    kv_mtia_se_binary(d, KV_OP_SUM, cb_u, KV_CB_KEEP, -1, 0, 0, cb_r, sm_chunk, sm_cols, KV_F32, KV_F32);
    kv_mtia_se_binary(d, KV_OP_DIV, cb_u, KV_CB_POP, cb_r, KV_CB_POP, KV_Y_COL, cb_y, sm_chunk, sm_cols, KV_F32,
                      KV_BF16);
    kv_mtia_dma_out(d, kv_mtia_rows(c.y + off, 1, io, io), cb_y, KV_CB_POP);
  }
}

// C (8 x 32 tiles, fp16) = relu(A (8 x K) x B (K x 32) + bias) on 32x32 DPE
// tiles; each program cycles over its own 8-row band of A and a 32-column
// band of B, C and bias.
constexpr int gt_m = 8, gt_n = 32, gt_kb = 32, gt_k = 128;

struct gemm_tile_ctx {
  uint64_t a, b, bias, c;
  int tiles;
};

void gemm_tile_program(kv_mtia_device* d, const void* u) {
  const gemm_tile_ctx& g = *static_cast<const gemm_tile_ctx*>(u);
  const uint64_t pid = uint64_t(kv_mtia_program_id(d));
  const int cb_a = kv_mtia_cb_alloc(d, gt_m * gt_kb * 2, 2), cb_b = kv_mtia_cb_alloc(d, gt_kb * gt_n * 2, 2);
  const int cb_bias = kv_mtia_cb_alloc(d, gt_n * 4, 1), cb_c = kv_mtia_cb_alloc(d, gt_m * gt_n * 2, 2);
  const int acc = kv_mtia_acc_alloc(d, gt_m, gt_n);
  const uint64_t a = g.a + pid * gt_m * gt_k * 2, b = g.b + pid * gt_k * gt_n * 2, c = g.c + pid * gt_m * gt_n * 2;
  kv_mtia_dma_in(d, cb_bias, kv_mtia_rows(g.bias + pid * gt_n * 4, 1, gt_n * 4, gt_n * 4));
  for (int t = 0; t < g.tiles; ++t) {
    for (int k = 0; k < gt_k; k += gt_kb) {
      kv_mtia_dma_in(d, cb_b, kv_mtia_rows(b + uint64_t(k) * gt_n * 2, gt_kb, gt_n * 2, gt_n * 2));
      kv_mtia_dpe_load_b(d, cb_b, gt_kb, gt_n, KV_F16, KV_CB_POP);
      kv_mtia_dma_in(d, cb_a, kv_mtia_rows(a + uint64_t(k) * 2, gt_m, gt_kb * 2, gt_k * 2));
      kv_mtia_dpe_mm(d, cb_a, gt_m, gt_kb, gt_kb, acc, k == 0 ? KV_MM_ZERO : 0u);
    }
    kv_mtia_re_drain(d, acc, cb_c, KV_F16, KV_OP_RELU, cb_bias, KV_CB_KEEP);
    kv_mtia_dma_out(d, kv_mtia_rows(c, gt_m, gt_n * 2, gt_n * 2), cb_c, KV_CB_POP);
  }
}

struct gemm_ctx {
  uint64_t a, w, c;
};

// Weight-in-DRAM GEMM, activations resident, weights broadcast down columns.
void gemm_program(kv_mtia_device* d, const void* u) {
  const gemm_ctx& g = *static_cast<const gemm_ctx*>(u);
  const int M = 512, N = 26592, K = 2048, kb = 256, nb = 64;
  const int cols = kv_mtia_grid_cols(d), pid = kv_mtia_program_id(d);
  const int r = pid / cols, col = pid % cols, mp = M / kv_mtia_grid_rows(d);
  const int gran = N / 16, n0 = gran * col / cols * 16, n1 = gran * (col + 1) / cols * 16;
  int ca[8];
  for (int k = 0; k < K / kb; ++k) {
    ca[k] = kv_mtia_cb_alloc(d, mp * kb * 2, 1);
    kv_mtia_dma_in(d, ca[k], kv_mtia_rows(g.a + (uint64_t(r) * mp * K + k * kb) * 2, mp, kb * 2, K * 2));
  }
  const int cw = kv_mtia_cb_alloc(d, kb * nb * 2, 3), cc = kv_mtia_cb_alloc(d, mp * nb * 2, 2);
  const int acc = kv_mtia_acc_alloc(d, mp, nb), acc_tail = kv_mtia_acc_alloc(d, mp, 48);
  for (int n = n0; n < n1; n += nb) {
    const int nn = std::min(nb, n1 - n);
    const int a = nn == nb ? acc : acc_tail;
    for (int k = 0; k < K / kb; ++k) {
      kv_mtia_dma_in_bcast(d, cw, kv_mtia_rows(g.w + (uint64_t(k) * kb * N + n) * 2, kb, nn * 2, N * 2));
      kv_mtia_dpe_load_b(d, cw, kb, nn, KV_F16, 0);
      kv_mtia_dpe_mm(d, ca[k], mp, kb, kb, a, (k == 0 ? KV_MM_ZERO : 0u) | KV_CB_KEEP);
    }
    kv_mtia_re_drain(d, a, cc, KV_F16, KV_OP_COPY, -1, 0);
    kv_mtia_dma_out(d, kv_mtia_rows(g.c + (uint64_t(r) * mp * N + n) * 2, mp, nn * 2, N * 2), cc, 0);
  }
}

// Deterministic, finite inputs of a given dtype size (fp16/bf16 bit patterns
// of small values, fp32 values).
void fill(device& dev, uint64_t addr, uint64_t bytes, int32_t dtype, uint32_t seed) {
  uint8_t* p = dev.host(addr, bytes);
  uint32_t s = seed;
  auto next = [&] { return (s = s * 1664525u + 1013904223u) >> 8; };
  for (uint64_t i = 0; i < bytes / (dtype == KV_F32 ? 4 : 2); ++i) {
    const float v = float(next() % 2001) / 1000.0f - 1.0f;
    if (dtype == KV_F32) std::memcpy(p + 4 * i, &v, 4);
    else {
      const uint16_t h = dtype == KV_F16 ? kv_f32_to_f16(v) : kv_f32_to_bf16(v);
      std::memcpy(p + 2 * i, &h, 2);
    }
  }
}

struct sample {
  double wall, user;
};

double cpu_user_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

template <class F>
std::vector<sample> time_runs(int runs, F&& f) {
  std::vector<sample> t;
  for (int i = 0; i < runs; ++i) {
    const double c0 = cpu_user_seconds();
    const auto s = std::chrono::steady_clock::now();
    f();
    t.push_back({std::chrono::duration<double>(std::chrono::steady_clock::now() - s).count(), cpu_user_seconds() - c0});
  }
  return t;
}

// Cycle counts of the default run (STEPS = 10000), recorded before the speed work.
// Cycle counts and output hashes (functional workloads) of the default run
// (STEPS = 10000), recorded before the speed work.
struct recorded {
  const char* name;
  double cycles;
  uint64_t output;
};
constexpr recorded kRecorded[] = {
    {"stream/timing", 943463.99999993842, 0},
    {"stream/functional", 943463.99999993842, 0x29839f8a5cf748b6ull},
    {"softmax/functional", 229352.19200000406, 0xd0a152e0438dc5dfull},
    {"gemm_tile/functional", 478873.736000014, 0xfeea6aaab8fda30full},
    {"gemm/timing", 751711.97820021992, 0},
};

uint64_t fnv1a(const uint8_t* p, uint64_t n) {
  uint64_t h = 1469598103934665603ull;
  for (uint64_t i = 0; i < n; ++i) h = (h ^ p[i]) * 1099511628211ull;
  return h;
}

bool report(const char* name, const run_result& r, std::vector<sample> t, uint64_t output, bool check) {
  std::sort(t.begin(), t.end(), [](const sample& a, const sample& b) { return a.wall < b.wall; });
  const double med = t[t.size() / 2].wall, lo = t.front().wall, hi = t.back().wall;
  std::vector<double> cpu;
  for (const sample& s : t) cpu.push_back(s.user);
  std::sort(cpu.begin(), cpu.end());
  const double rate = double(r.commands) / med;
  std::printf("%-20s %8llu cmds  %8.2f ms [%.2f..%.2f]  %10.3g cmds/s (cpu %10.3g)  %5.2fx target  %.17g cycles"
              "  out %016llx",
              name, static_cast<unsigned long long>(r.commands), med * 1e3, lo * 1e3, hi * 1e3, rate,
              double(r.commands) / cpu[cpu.size() / 2], rate / 1e7, r.cycles, static_cast<unsigned long long>(output));
  bool ok = true;
  if (check)
    for (const recorded& e : kRecorded)
      if (std::strcmp(e.name, name) == 0 && e.cycles != 0) {
        ok = e.cycles == r.cycles && e.output == output;
        std::printf("  %s", ok ? "= recorded" : "DIFFERS from recorded");
      }
  std::printf("\n");
  return ok;
}

bool wanted(int argc, char** argv, const char* name) {
  if (argc <= 2) return true;
  for (int i = 2; i < argc; ++i)
    if (std::strstr(name, argv[i])) return true;
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  const int steps = argc > 1 ? std::atoi(argv[1]) : 10000;
  const bool check = steps == 10000;
  const int runs = 7;
  device dev(mtia2i());
  std::string err;
  run_result r;
  bool all_ok = true;
  auto run = [&](const char* name, bool functional, kv_mtia_program_fn fn, const void* ctx, uint64_t out,
                 uint64_t out_bytes) {
    if (!wanted(argc, argv, name)) return;
    dev.set_functional(functional);
    const auto t = time_runs(runs, [&] {
      dev.begin_run();
      kv_mtia_launch(dev.handle(), 64, fn, ctx);
      r = dev.end_run();
    });
    if (!r.ok()) {
      std::fprintf(stderr, "%s failed: %s\n", name, r.message.c_str());
      std::exit(1);
    }
    all_ok = report(name, r, t, functional ? fnv1a(dev.host(out, out_bytes), out_bytes) : 0, check) && all_ok;
  };
  const stream_ctx sc{dev.alloc(level::sram, 64 * 256, &err), dev.alloc(level::sram, 64 * 256, &err), steps};
  fill(dev, sc.in, 64 * 256, KV_F32, 1);
  run("stream/timing", false, stream_program, &sc, sc.out, 64 * 256);
  run("stream/functional", true, stream_program, &sc, sc.out, 64 * 256);
  const uint64_t sm_bytes = 64ull * sm_band * sm_cols * 2;
  const softmax_ctx smc{dev.alloc(level::sram, sm_bytes, &err), dev.alloc(level::sram, sm_bytes, &err), steps / 4};
  fill(dev, smc.x, sm_bytes, KV_BF16, 2);
  run("softmax/functional", true, softmax_program, &smc, smc.y, sm_bytes);
  const gemm_tile_ctx gt{dev.alloc(level::sram, 64ull * gt_m * gt_k * 2, &err),
                         dev.alloc(level::sram, 64ull * gt_k * gt_n * 2, &err),
                         dev.alloc(level::sram, 64ull * gt_n * 4, &err),
                         dev.alloc(level::sram, 64ull * gt_m * gt_n * 2, &err), steps / 10};
  fill(dev, gt.a, 64ull * gt_m * gt_k * 2, KV_F16, 3);
  fill(dev, gt.b, 64ull * gt_k * gt_n * 2, KV_F16, 4);
  fill(dev, gt.bias, 64ull * gt_n * 4, KV_F32, 5);
  run("gemm_tile/functional", true, gemm_tile_program, &gt, gt.c, 64ull * gt_m * gt_n * 2);
  dev.free_all();
  if (wanted(argc, argv, "gemm/timing")) {  // 136 MB of device memory: only when it runs
    const gemm_ctx g{dev.alloc(level::sram, 512 * 2048 * 2, &err), dev.alloc(level::dram, 2048ull * 26592 * 2, &err),
                     dev.alloc(level::sram, 512ull * 26592 * 2, &err)};
    run("gemm/timing", false, gemm_program, &g, g.c, 0);
  }
  std::printf("target: 1e7 emulated engine commands per second on one core (median wall; cpu: over CPU time)\n");
  if (!all_ok) std::fprintf(stderr, "emulated cycle counts or outputs differ from the recorded ones\n");
  return all_ok ? 0 : 1;
}
