// Hard invariants of the timing model (mtia.md 6.6): no run beats a roofline
// floor, bigger problems and redundant commands never help, more bandwidth
// never hurts, runs repeat to the cycle, variant rankings survive +-30% on
// every assumed cost parameter.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>

#include "gemm_setup.h"

namespace kevolve::emu::mtia::testing {
namespace {

struct variant {
  const char* name;
  gemm_problem pr;
  tiles t;
};

// A spread of kernels: compute-, SRAM-, DRAM-, latency-bound, good and bad.
std::vector<variant> variants() {
  gemm_problem dram{256, 4096, 1024};
  dram.b_at = level::dram;
  return {
      {"naive", {1024, 1024, 1024}, naive_tiles(32, 64, 128)},
      {"double_buffered", {1024, 1024, 1024}, double_buffered_tiles(32, 64, 128)},
      {"broadcast", {1024, 1024, 1024}, broadcast_tiles(64, 128, 256)},
      {"dram_streaming", dram, naive_tiles(32, 64, 256)},
      {"dram_resident_bcast", dram, tiles{32, 64, 256, 3, 1, 1}},
      {"tiny", {64, 64, 64}, double_buffered_tiles(8, 16, 64)},
  };
}

double cycles(const params& p, const variant& v, int redundant = 0) {
  device dev(p);
  tiles t = v.t;
  t.redundant = redundant;
  const gemm_run r = run_gemm(dev, v.pr, t, false);
  EXPECT_TRUE(r.result.ok()) << v.name << ": " << r.result.message;
  return r.result.cycles;
}

TEST(emu_invariants, no_run_beats_any_roofline_floor) {
  const params p = mtia2i();
  for (const variant& v : variants()) {
    device dev(p);
    const gemm_run r = run_gemm(dev, v.pr, v.t, false);
    ASSERT_TRUE(r.result.ok()) << r.result.message;
    // Floors from the problem alone, not from the emulator's own counters.
    const double flops = 2.0 * v.pr.m * v.pr.n * v.pr.k;
    const double b_bytes = 2.0 * v.pr.k * v.pr.n;
    const double floor_compute = flops / p.peak_flops_per_cycle();
    const double floor_dram = v.pr.b_at == level::dram ? b_bytes / p.dram_effective_bytes_per_cycle() : 0;
    const double floor_sram = v.pr.b_at == level::sram ? (b_bytes + 2.0 * v.pr.m * v.pr.k) / p.sram_bytes_per_cycle : 0;
    const double floor = std::max({floor_compute, floor_dram, floor_sram}) + p.launch_cycles;
    EXPECT_GE(r.result.cycles, floor) << v.name;
    EXPECT_GE(r.result.cycles, r.result.lower_bound_cycles(p)) << v.name;
    EXPECT_GE(r.result.cycles, double(r.result.issued) / p.pes() * p.issue_cycles) << v.name;
    for (int e = 0; e < n_engines; ++e) EXPECT_LE(r.result.utilisation[e], 1.0 + 1e-9) << v.name << " " << e;
  }
}

TEST(emu_invariants, a_bigger_problem_is_never_faster) {
  const params p = mtia2i();
  for (const tiles& t : {naive_tiles(16, 32, 128), broadcast_tiles(16, 32, 128)}) {
    double last = 0;
    for (int s : {128, 256, 384, 512, 768}) {
      const double c = cycles(p, variant{"grow", {s, s, s}, t});
      EXPECT_GE(c, last) << "size " << s;
      last = c;
    }
    // growing one dimension at a time
    EXPECT_GE(cycles(p, variant{"k", {256, 256, 512}, t}), cycles(p, variant{"k", {256, 256, 384}, t}));
    EXPECT_GE(cycles(p, variant{"n", {256, 512, 256}, t}), cycles(p, variant{"n", {256, 384, 256}, t}));
  }
}

TEST(emu_invariants, a_redundant_command_never_helps) {
  const params p = mtia2i();
  for (const variant& v : variants()) EXPECT_GE(cycles(p, v, 1), cycles(p, v, 0)) << v.name;
}

TEST(emu_invariants, more_bandwidth_or_rate_never_slows_a_run) {
  const params base = mtia2i();
  const char* faster_up[] = {"sram_bytes_per_cycle", "dram_bytes_per_cycle", "noc_bytes_per_cycle",
                             "fi_bytes_per_cycle", "ls_bytes_per_cycle", "dpe_macs_per_cycle",
                             "re_bytes_per_cycle", "se_elems_per_cycle"};
  const char* faster_down[] = {"sram_latency_cycles", "dram_latency_cycles", "issue_cycles", "launch_cycles",
                               "dpe_pipeline_cycles", "dma_descriptor_cycles"};
  for (const variant& v : variants()) {
    const double c0 = cycles(base, v);
    for (const auto& row : param_table()) {
      double scale = 0;
      for (const char* k : faster_up) scale = std::strcmp(k, row.key) == 0 ? 1.5 : scale;
      for (const char* k : faster_down) scale = std::strcmp(k, row.key) == 0 ? 0.5 : scale;
      if (scale == 0) continue;
      params p = base;
      p.*(row.field) *= scale;
      EXPECT_LE(cycles(p, v), c0 * (1 + 1e-12)) << v.name << " with " << row.key << " x" << scale;
    }
  }
}

TEST(emu_invariants, runs_are_deterministic_to_the_cycle) {
  const params p = mtia2i();
  for (const variant& v : variants()) {
    device d1(p), d2(p);
    const gemm_run a = run_gemm(d1, v.pr, v.t, false);
    const gemm_run b = run_gemm(d2, v.pr, v.t, false);
    const gemm_run c = run_gemm(d1, v.pr, v.t, false);  // same device again
    EXPECT_EQ(a.result.cycles, b.result.cycles) << v.name;
    EXPECT_EQ(a.result.cycles, c.result.cycles) << v.name;
    EXPECT_EQ(a.result.stalls, b.result.stalls) << v.name;
    EXPECT_EQ(a.result.busy, c.result.busy) << v.name;
  }
}

// Kendall tau between two orderings of the same variants.
double kendall_tau(const std::vector<double>& x, const std::vector<double>& y) {
  int concordant = 0, discordant = 0;
  for (size_t i = 0; i < x.size(); ++i)
    for (size_t j = i + 1; j < x.size(); ++j) {
      const double s = (x[i] - x[j]) * (y[i] - y[j]);
      if (s > 0) ++concordant;
      else if (s < 0) ++discordant;
    }
  return double(concordant - discordant) / double(concordant + discordant);
}

TEST(emu_invariants, variant_ranking_is_stable_when_assumed_costs_move_30_percent) {
  // Capacity-like assumptions (B-cache, accumulators, CB and loop limits,
  // granule, inbox depth) would make kernels invalid rather than slower; the
  // others are every assumed cost.
  const char* capacity[] = {"dpe_bcache_bytes", "re_acc_bytes", "max_cbs", "max_cb_slots", "loop_max",
                            "dma_granule_bytes", "re_inbox_slots", "dpe_tile"};
  const params base = mtia2i();
  const auto vs = variants();
  std::vector<double> ref;
  for (const variant& v : vs) ref.push_back(cycles(base, v));
  // the SRAM variants must be strictly ordered: naive > double buffered > broadcast
  EXPECT_GT(ref[0], ref[1]);
  EXPECT_GT(ref[1], ref[2]);
  EXPECT_GT(ref[3], ref[4]);
  int perturbed = 0;
  for (size_t i = 0; i < param_table().size(); ++i) {
    const auto& row = param_table()[i];
    if (base.prov[i] != provenance::assumed) continue;
    if (std::any_of(std::begin(capacity), std::end(capacity), [&](const char* k) { return std::strcmp(k, row.key) == 0; }))
      continue;
    for (double f : {0.7, 1.3}) {
      params p = base;
      p.*(row.field) = std::min(row.max, p.*(row.field) * f);
      std::vector<double> got;
      for (const variant& v : vs) got.push_back(cycles(p, v));
      const double tau = kendall_tau(ref, got);
      EXPECT_GE(tau, 0.8) << row.key << " x" << f;
      ++perturbed;
    }
  }
  EXPECT_GE(perturbed, 20);
}

}  // namespace
}  // namespace kevolve::emu::mtia::testing
