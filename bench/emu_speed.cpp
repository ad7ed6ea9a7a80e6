// Emulator speed: emulated engine commands per second on one host core
// (issue 6 target: >= 1e7/s, so that a search step costs seconds).
//
// Three workloads, each timed end to end (intrinsic calls, trace recording,
// event-driven replay) over several runs, median reported:
//   stream/timing     64 programs x 3 commands per step (DMA in, SE op, DMA out)
//                     on small tiles, arithmetic off (timing-only mode)
//   stream/functional the same with the arithmetic on
//   gemm/timing       the 512x26592x2048 weight-in-DRAM GEMM kernel (87k commands)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
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

template <class F>
double median_seconds(int runs, F&& f) {
  std::vector<double> t;
  for (int i = 0; i < runs; ++i) {
    const auto s = std::chrono::steady_clock::now();
    f();
    t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - s).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

void report(const char* name, const run_result& r, double secs) {
  const double rate = double(r.commands) / secs;
  std::printf("%-18s %9llu commands  %8.2f ms  %12.0f commands/s  %5.2fx target  (emulated %.1f us, bound %s)\n",
              name, static_cast<unsigned long long>(r.commands), secs * 1e3, rate, rate / 1e7, r.us,
              to_string(r.bound));
}

}  // namespace

int main(int argc, char** argv) {
  const int steps = argc > 1 ? std::atoi(argv[1]) : 10000;
  const int runs = 5;
  device dev(mtia2i());
  std::string err;
  stream_ctx sc{dev.alloc(level::sram, 64 * 256, &err), dev.alloc(level::sram, 64 * 256, &err), steps};
  run_result r;
  for (bool functional : {false, true}) {
    dev.set_functional(functional);
    const double s = median_seconds(runs, [&] {
      dev.begin_run();
      kv_mtia_launch(dev.handle(), 64, stream_program, &sc);
      r = dev.end_run();
    });
    if (!r.ok()) return std::fprintf(stderr, "stream failed: %s\n", r.message.c_str()), 1;
    report(functional ? "stream/functional" : "stream/timing", r, s);
  }
  dev.free_all();
  dev.set_functional(false);
  gemm_ctx g{dev.alloc(level::sram, 512 * 2048 * 2, &err), dev.alloc(level::dram, 2048ull * 26592 * 2, &err),
             dev.alloc(level::sram, 512ull * 26592 * 2, &err)};
  const double s = median_seconds(runs, [&] {
    dev.begin_run();
    kv_mtia_launch(dev.handle(), 64, gemm_program, &g);
    r = dev.end_run();
  });
  if (!r.ok()) return std::fprintf(stderr, "gemm failed: %s\n", r.message.c_str()), 1;
  report("gemm/timing", r, s);
  std::printf("target: 1e7 emulated engine commands per second on one core\n");
  return 0;
}
