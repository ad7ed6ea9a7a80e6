// Parameters of the emulated chip: one plain struct, every field with its
// provenance (published / derived / assumed; sources in
// knowledge/hardware/mtia2i/architecture.md) and
// its source. The YAML profiles in config/hardware/ are the configurable
// copies (loaded by src/spec/mtia_profile.cpp); mtia2i() and mtia300() are
// the same numbers built in, and a test checks that both agree.
#pragma once

#include <array>
#include <cstddef>
#include <string>

namespace kevolve::emu::mtia {

enum class provenance { published, derived, assumed };
const char* to_string(provenance p);

struct params {
  std::string name;  // "mtia2i", "mtia300"
  // chip
  double clock_ghz = 0;
  double pe_rows = 0, pe_cols = 0;
  double launch_cycles = 0;          // kernel launch
  double program_switch_cycles = 0;  // next program on the same PE
  double ls_bytes = 0;               // local memory per PE
  double ls_bytes_per_cycle = 0;     // local memory port (DPE B-cache fill)
  double sram_bytes = 0;             // on-chip SRAM usable as LLS scratch
  double sram_bytes_per_cycle = 0;   // chip-wide
  double dram_bytes = 0;
  double dram_bytes_per_cycle = 0;   // chip-wide peak
  double dram_efficiency = 0;        // achievable fraction (ECC, refresh)
  double noc_bytes_per_cycle = 0;    // chip-wide NoC, all PE traffic
  double fi_bytes_per_cycle = 0;     // per-PE DMA port, each direction
  double sram_latency_cycles = 0;
  double dram_latency_cycles = 0;
  double dma_descriptor_cycles = 0;
  double dma_align_bytes = 0;        // 1: unaligned DMA allowed
  double dma_granule_bytes = 0;      // transfers are charged in these units
  double barrier_cycles = 0;
  // per PE
  double dpe_macs_per_cycle = 0;     // fp16/bf16
  double dpe_tile = 0;               // MAC tile edge: m x ceil(k/t) x ceil(n/t) steps
  double dpe_pipeline_cycles = 0;
  double dpe_bcache_bytes = 0;
  double re_acc_bytes = 0;
  double re_bytes_per_cycle = 0;     // drain into local memory
  double re_send_bytes_per_cycle = 0;
  double re_inbox_slots = 0;
  double se_elems_per_cycle = 0;
  double se_lut_elems_per_cycle = 0;
  double vec_bytes_per_cycle = 0;
  double se_gather_elems_per_cycle = 0;   // kv_mtia_lm_gather on the SE
  double vec_gather_elems_per_cycle = 0;  // kv_mtia_lm_gather on the vector core
  double int64_mul_cost = 0;              // passes of a 64-bit multiply (MUL, MULHI_U) per simple op
  double int_div_cost = 0;                // passes of a remainder (REM_U) per simple op
  double mlu_bytes_per_cycle = 0;
  double issue_cycles = 0;           // per custom instruction on the scalar core
  double loop_max = 0;               // commands one looped instruction may cover
  double max_cbs = 0;                // circular buffers per PE
  double max_cb_slots = 0;
  // scalar core and segments (gather/segment class)
  double sc_load_cycles = 0;         // scalar core: load-to-use of one value from local memory
  double sc_store_cycles = 0;        // scalar core: one value stored to local memory
  double re_segment_cycles = 0;      // RE: per segment of a segmented row-accumulate

  static constexpr std::size_t count = 43;
  std::array<provenance, count> prov{};
  std::array<std::string, count> source{};

  int pes() const { return static_cast<int>(pe_rows * pe_cols); }
  double cycles_to_us(double cycles) const { return cycles / (clock_ghz * 1e3); }
  double dram_effective_bytes_per_cycle() const { return dram_bytes_per_cycle * dram_efficiency; }
  double peak_flops_per_cycle() const { return 2.0 * dpe_macs_per_cycle * pes(); }
};

// One row of the parameter table: the YAML key, the field, limits.
struct param_info {
  const char* key;
  double params::*field;
  bool integer;
  double min, max;
  const char* unit;
};
const std::array<param_info, params::count>& param_table();

params mtia2i();   // the default: MTIA 2i-like
params mtia300();  // lower confidence: MTIA 300-like

// "" when every field is within its table limits and consistent, else the first problem.
std::string validate(const params& p);

}  // namespace kevolve::emu::mtia
