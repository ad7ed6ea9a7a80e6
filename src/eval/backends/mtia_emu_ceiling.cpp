#include "eval/backends/mtia_emu_ceiling.h"

#include <algorithm>

#include "eval/backends/mtia_emu_shared.h"

namespace kevolve::eval::mtia_emu {

ceiling attainable_ceiling(const emu::mtia::params& p, const ceiling_work& w) {
  ceiling c;
  if (!(p.clock_ghz > 0) || p.pes() <= 0) return c;
  const double hz = p.clock_ghz * 1e9;
  const bool sram = in_sram(w.call_bytes, p);
  c.memory_s = w.bytes / (bandwidth_gbs(sram, p) * 1e9);
  c.products = w.float_bits > 16 && w.rtol < kOneProductRtol ? 3.0 : 1.0;
  c.compute_s = w.flops * c.products / (peak_gflops(p) * 1e9);
  const double lanes = p.pes() * (p.se_elems_per_cycle + p.vec_bytes_per_cycle / 4.0);
  c.integer_s = w.int_passes > 0 && lanes > 0 ? w.int_passes / lanes / hz : 0.0;
  c.fixed_s = (p.launch_cycles + p.dma_descriptor_cycles + p.sram_latency_cycles) / hz;
  const double work = std::max({c.memory_s, c.compute_s, c.integer_s});
  c.seconds = work + c.fixed_s;
  std::string term;
  if (c.integer_s >= c.memory_s && c.integer_s >= c.compute_s && c.integer_s > 0) term = "integer engines";
  else if (c.compute_s > c.memory_s) term = c.products > 1 ? "DPE split" : "DPE";
  else term = sram ? "memory (SRAM)" : "memory (DRAM)";
  if (c.fixed_s >= work) c.bound = "launch";
  else if (c.fixed_s >= kLaunchShare * c.seconds) c.bound = "launch + " + term;
  else c.bound = term;
  return c;
}

}  // namespace kevolve::eval::mtia_emu
