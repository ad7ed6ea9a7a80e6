#include "emu/mtia/params.h"

#include <cmath>
#include <cstring>
#include <stdexcept>

namespace kevolve::emu::mtia {

const char* to_string(provenance p) {
  switch (p) {
    case provenance::published: return "published";
    case provenance::derived: return "derived";
    case provenance::assumed: return "assumed";
  }
  return "?";
}

const std::array<param_info, params::count>& param_table() {
  using P = params;
  static const std::array<param_info, params::count> t{{
      {"clock_ghz", &P::clock_ghz, false, 0.1, 10, "GHz"},
      {"pe_rows", &P::pe_rows, true, 1, 64, "PEs"},
      {"pe_cols", &P::pe_cols, true, 1, 64, "PEs"},
      {"launch_cycles", &P::launch_cycles, false, 0, 1e7, "cycles"},
      {"program_switch_cycles", &P::program_switch_cycles, false, 0, 1e7, "cycles"},
      {"ls_bytes", &P::ls_bytes, true, 1024, 1 << 26, "bytes"},
      {"ls_bytes_per_cycle", &P::ls_bytes_per_cycle, false, 1, 1e5, "bytes/cycle"},
      {"sram_bytes", &P::sram_bytes, true, 0, 1e11, "bytes"},
      {"sram_bytes_per_cycle", &P::sram_bytes_per_cycle, false, 1, 1e6, "bytes/cycle"},
      {"dram_bytes", &P::dram_bytes, true, 1 << 20, 1e13, "bytes"},
      {"dram_bytes_per_cycle", &P::dram_bytes_per_cycle, false, 1, 1e6, "bytes/cycle"},
      {"dram_efficiency", &P::dram_efficiency, false, 0.1, 1, "fraction"},
      {"noc_bytes_per_cycle", &P::noc_bytes_per_cycle, false, 1, 1e6, "bytes/cycle"},
      {"fi_bytes_per_cycle", &P::fi_bytes_per_cycle, false, 1, 1e5, "bytes/cycle"},
      {"sram_latency_cycles", &P::sram_latency_cycles, false, 0, 1e5, "cycles"},
      {"dram_latency_cycles", &P::dram_latency_cycles, false, 0, 1e5, "cycles"},
      {"dma_descriptor_cycles", &P::dma_descriptor_cycles, false, 0, 1e4, "cycles"},
      {"dma_align_bytes", &P::dma_align_bytes, true, 1, 4096, "bytes"},
      {"dma_granule_bytes", &P::dma_granule_bytes, true, 1, 4096, "bytes"},
      {"barrier_cycles", &P::barrier_cycles, false, 0, 1e6, "cycles"},
      {"dpe_macs_per_cycle", &P::dpe_macs_per_cycle, false, 1, 1e6, "MAC/cycle"},
      {"dpe_tile", &P::dpe_tile, true, 1, 1024, "elements"},
      {"dpe_pipeline_cycles", &P::dpe_pipeline_cycles, false, 0, 1e4, "cycles"},
      {"dpe_bcache_bytes", &P::dpe_bcache_bytes, true, 1024, 1 << 26, "bytes"},
      {"re_acc_bytes", &P::re_acc_bytes, true, 1024, 1 << 26, "bytes"},
      {"re_bytes_per_cycle", &P::re_bytes_per_cycle, false, 1, 1e5, "bytes/cycle"},
      {"re_send_bytes_per_cycle", &P::re_send_bytes_per_cycle, false, 1, 1e5, "bytes/cycle"},
      {"re_inbox_slots", &P::re_inbox_slots, true, 1, 64, "tiles"},
      {"se_elems_per_cycle", &P::se_elems_per_cycle, false, 1, 1e5, "elements/cycle"},
      {"se_lut_elems_per_cycle", &P::se_lut_elems_per_cycle, false, 1, 1e5, "elements/cycle"},
      {"vec_bytes_per_cycle", &P::vec_bytes_per_cycle, false, 1, 1e5, "bytes/cycle"},
      {"se_gather_elems_per_cycle", &P::se_gather_elems_per_cycle, false, 0.01, 1e5, "elements/cycle"},
      {"vec_gather_elems_per_cycle", &P::vec_gather_elems_per_cycle, false, 0.01, 1e5, "elements/cycle"},
      {"int64_mul_cost", &P::int64_mul_cost, false, 1, 1e3, "passes"},
      {"int_div_cost", &P::int_div_cost, false, 1, 1e4, "passes"},
      {"mlu_bytes_per_cycle", &P::mlu_bytes_per_cycle, false, 1, 1e5, "bytes/cycle"},
      {"issue_cycles", &P::issue_cycles, false, 0, 1e4, "cycles"},
      {"loop_max", &P::loop_max, true, 1, 1 << 20, "commands"},
      {"max_cbs", &P::max_cbs, true, 1, 1024, "buffers"},
      {"max_cb_slots", &P::max_cb_slots, true, 1, 1024, "slots"},
      {"sc_load_cycles", &P::sc_load_cycles, false, 0, 1e4, "cycles"},
      {"sc_store_cycles", &P::sc_store_cycles, false, 0, 1e4, "cycles"},
      {"re_segment_cycles", &P::re_segment_cycles, false, 0, 1e4, "cycles"},
  }};
  return t;
}

namespace {

void set(params& p, const char* key, double v, provenance pv, const char* src) {
  const auto& t = param_table();
  for (std::size_t i = 0; i < t.size(); ++i) {
    if (std::strcmp(t[i].key, key) == 0) {
      p.*(t[i].field) = v;
      p.prov[i] = pv;
      p.source[i] = src;
      return;
    }
  }
  throw std::logic_error(std::string("mtia params: unknown key ") + key);
}

constexpr provenance P = provenance::published;
constexpr provenance D = provenance::derived;
constexpr provenance A = provenance::assumed;

// Sources of the integer / gather rates (the YAML profiles carry the same text).
constexpr const char* SE_GATHER_SRC =
    "not published; half the SE width: 32 random 4-byte reads per cycle would need conflict-free banks";
constexpr const char* VEC_GATHER_SRC = "not published; indexed vector loads of a small in-order RISC-V vector unit";
constexpr const char* INT64_MUL_SRC = "not published; 32-bit lanes: a 64-bit product takes 4 partial products";
constexpr const char* INT_DIV_SRC = "not published; an iterative radix-4 divider: 32 steps for 64 bits";

}  // namespace

params mtia2i() {
  params p;
  p.name = "mtia2i";
  set(p, "clock_ghz", 1.35, P, "S4: 1.35 GHz");
  set(p, "pe_rows", 8, P, "S4: 8x8 PE grid");
  set(p, "pe_cols", 8, P, "S4: 8x8 PE grid");
  set(p, "launch_cycles", 1350, P, "S4: jobs launch in under 1 us (upper bound)");
  set(p, "program_switch_cycles", 675, P, "S4: jobs replaced in under 0.5 us (upper bound)");
  set(p, "ls_bytes", 393216, P, "S4: 384 KB local memory per PE");
  set(p, "ls_bytes_per_cycle", 740, D, "S4 1 TB/s / 1.35 GHz");
  set(p, "sram_bytes", 268435456, P, "S4: 256 MB on-chip SRAM (all of it usable as LLS here)");
  set(p, "sram_bytes_per_cycle", 2000, D, "S4 2.7 TB/s / 1.35 GHz");
  set(p, "dram_bytes", 68719476736.0, P, "S4: LPDDR5 64-128 GB (64 GB)");
  set(p, "dram_bytes_per_cycle", 151.7, D, "S4 204.8 GB/s / 1.35 GHz");
  set(p, "dram_efficiency", 0.97, A, "chosen so that S4's >95% of DRAM bandwidth is reachable; ECC is inside S4's figure");
  set(p, "noc_bytes_per_cycle", 2400, A, "not published (S4: 3.3x MTIA 1); above SRAM so the SRAM binds first");
  set(p, "fi_bytes_per_cycle", 64, A, "not published; mtia.md 6.3");
  set(p, "sram_latency_cycles", 150, A, "mtia.md 6.3");
  set(p, "dram_latency_cycles", 400, A, "mtia.md 6.3");
  set(p, "dma_descriptor_cycles", 20, A, "mtia.md 6.3");
  set(p, "dma_align_bytes", 32, P, "S8: all memory accesses must be 32-byte aligned");
  set(p, "dma_granule_bytes", 32, A, "transfers charged in 32-byte units, matching the alignment");
  set(p, "barrier_cycles", 100, A, "not published");
  set(p, "dpe_macs_per_cycle", 1024, D, "S4 177 TFLOPS / 64 PE / 1.35 GHz / 2");
  set(p, "dpe_tile", 32, A, "reading of S4's two 32x32B x32 MAC tiles");
  set(p, "dpe_pipeline_cycles", 32, A, "mtia.md 6.3");
  set(p, "dpe_bcache_bytes", 65536, A, "not published");
  set(p, "re_acc_bytes", 131072, A, "not published");
  set(p, "re_bytes_per_cycle", 128, A, "not published; absorbs the DPE output rate");
  set(p, "re_send_bytes_per_cycle", 64, A, "mtia.md 6.3");
  set(p, "re_inbox_slots", 2, A, "not published");
  set(p, "se_elems_per_cycle", 32, P, "S6: SE width 32 elements per cycle in MTIA 2i");
  set(p, "se_lut_elems_per_cycle", 32, A, "mtia.md 6.3");
  set(p, "vec_bytes_per_cycle", 64, D, "S4 5.5 TOPS INT8 / 64 PE / 1.35 GHz; 64 B vector");
  set(p, "se_gather_elems_per_cycle", 16, A, SE_GATHER_SRC);
  set(p, "vec_gather_elems_per_cycle", 4, A, VEC_GATHER_SRC);
  set(p, "int64_mul_cost", 4, A, INT64_MUL_SRC);
  set(p, "int_div_cost", 32, A, INT_DIV_SRC);
  set(p, "mlu_bytes_per_cycle", 64, A, "not published");
  set(p, "issue_cycles", 8, A, "mtia.md 6.3; S4 says issue-bound kernels are real");
  set(p, "loop_max", 4096, A, "not published; S4 auto-increment / multi-context instructions");
  set(p, "max_cbs", 32, A, "CB limits not published");
  set(p, "max_cb_slots", 16, A, "CB limits not published");
  set(p, "sc_load_cycles", 4, A, "not published; load-to-use of an in-order RISC-V core from the PE's local memory");
  set(p, "sc_store_cycles", 1, A, "not published; one store per cycle on the in-order scalar core");
  set(p, "re_segment_cycles", 2, A, "not published; reading a boundary and switching accumulator rows");
  return p;
}

params mtia300() {
  params p = mtia2i();
  p.name = "mtia300";
  set(p, "clock_ghz", 1.9, P, "S6: 1.9 GHz");
  set(p, "pe_rows", 12, P, "S6: 12x6 PEs (redundant row not used)");
  set(p, "pe_cols", 6, P, "S6: 12x6 PEs");
  set(p, "launch_cycles", 1900, A, "1 us as in MTIA 2i");
  set(p, "program_switch_cycles", 950, A, "0.5 us as in MTIA 2i");
  set(p, "ls_bytes", 524288, P, "S6: 512 KB local memory per PE");
  set(p, "ls_bytes_per_cycle", 1000, D, "S6 1.9 TB/s (R+W) / 1.9 GHz");
  set(p, "sram_bytes", 201326592, P, "S6: 192 MB LLC");
  set(p, "sram_bytes_per_cycle", 6000, D, "S6 11.4 TB/s (R+W) / 1.9 GHz");
  set(p, "dram_bytes", 231928233984.0, P, "S6: 216 GB HBM3E");
  set(p, "dram_bytes_per_cycle", 3210.5, D, "S6 6.1 TB/s / 1.9 GHz");
  set(p, "dram_efficiency", 0.91, P, "S6: 91% of HBM bandwidth");
  set(p, "noc_bytes_per_cycle", 7000, A, "not published; above the SRAM rate");
  set(p, "fi_bytes_per_cycle", 128, A, "not published");
  set(p, "dma_align_bytes", 1, P, "S6: byte-aligned DMA");
  set(p, "dpe_macs_per_cycle", 2047, D, "S6 560 TFLOPS / 72 PE / 1.9 GHz / 2");
  set(p, "se_elems_per_cycle", 128, P, "S6: SE from 32 to 128 elements per cycle");
  set(p, "se_lut_elems_per_cycle", 128, A, "as the SE width");
  set(p, "se_gather_elems_per_cycle", 64, A, "half the SE width, as in MTIA 2i");
  set(p, "vec_bytes_per_cycle", 256, A, "S6 42.5 TOPS / 72 / 1.9 GHz = 310 ops/cycle does not reconcile (mtia.md 6.7)");
  return p;
}

std::string validate(const params& p) {
  const auto& t = param_table();
  for (const auto& row : t) {
    const double v = p.*(row.field);
    if (!std::isfinite(v) || v < row.min || v > row.max)
      return std::string("'") + row.key + "' must be between " + std::to_string(row.min) + " and " +
             std::to_string(row.max) + " " + row.unit + ", got " + std::to_string(v);
    if (row.integer && v != std::floor(v))
      return std::string("'") + row.key + "' must be a whole number, got " + std::to_string(v);
  }
  if (p.re_acc_bytes > p.ls_bytes * 16) return "'re_acc_bytes' is implausibly large against 'ls_bytes'";
  return "";
}

}  // namespace kevolve::emu::mtia
