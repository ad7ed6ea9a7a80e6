// What the mtia_emu backend's evaluator side and its worker
// (kevolve-mtia-worker) must agree on: where a call's tensors live in the
// emulated chip, and the layout of the run profile the worker reports.
#pragma once

#include <cstdint>
#include <cstring>

#include "emu/mtia/params.h"

namespace kevolve::eval::mtia_emu {

// Every tensor of a call (inputs, outputs, workspace) lives in the on-chip
// SRAM scratch (LLS) when all of them fit there together, as S4's autotuner
// sizes the LLS to hold the activations; otherwise all of them live in DRAM.
inline bool in_sram(double call_bytes, const emu::mtia::params& p) { return call_bytes <= p.sram_bytes; }

// Peak rates of the roofline: bytes per second of the level the tensors live
// in (DRAM at its achievable efficiency), and the DPE's FLOP rate (every
// FLOP could at best run on the DPE, so it is a true lower bound).
inline double bandwidth_gbs(bool sram, const emu::mtia::params& p) {
  return (sram ? p.sram_bytes_per_cycle : p.dram_effective_bytes_per_cycle()) * p.clock_ghz;
}
inline double peak_gflops(const emu::mtia::params& p) { return p.peak_flops_per_cycle() * p.clock_ghz; }

// The profile of the last run, as int64 words (doubles bit-cast) in the
// reply to wire::op::profile.
enum profile_word : int {
  pw_cycles = 0,
  pw_us,
  pw_bound,  // emu::mtia::bound_class
  pw_sram,   // 1: tensors in SRAM
  pw_commands,
  pw_dram_bytes,
  pw_sram_bytes,
  pw_util,                // n_engines utilisations follow
  pw_stall = pw_util + 7,  // n_stalls stall cycles (engine idle gaps by reason, summed over PEs) follow
  pw_imbalance = pw_stall + 6,  // share of PE time spent done while another PE still ran
  pw_mem_unused,                // share of the run the busiest memory level's bandwidth went unused
  pw_mem_head,                  // of it: before the first transfer
  pw_mem_tail,                  // of it: after the last read
  pw_count
};

inline int64_t to_word(double d) {
  int64_t w;
  std::memcpy(&w, &d, sizeof w);
  return w;
}
inline double from_word(int64_t w) {
  double d;
  std::memcpy(&d, &w, sizeof d);
  return d;
}

}  // namespace kevolve::eval::mtia_emu
