// What one emulated run reports: time, per-engine utilisation, bytes per
// memory level, stall reasons and the bound class, or a clear error.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "emu/mtia/command.h"
#include "emu/mtia/params.h"

namespace kevolve::emu::mtia {

// Why an engine sat idle before a command (cycles summed over PEs).
enum stall : uint8_t {
  stall_issue = 0,    // the scalar core had not issued it yet
  stall_input,        // waiting for data in an input CB / accumulator / neighbour
  stall_output,       // waiting for a free slot in the output CB
  stall_dma_latency,  // DMA request latency not hidden
  stall_bandwidth,    // DMA slower than the PE port: shared SRAM/DRAM/NoC bandwidth
  stall_barrier,      // waiting at a barrier or program switch
  n_stalls
};
const char* stall_name(int s);

enum class bound_class { none, compute, sram, dram, noc, issue, latency };
const char* to_string(bound_class b);

struct run_result {
  int status = 0;       // kv_mtia_status; 0 = ok
  std::string message;  // set when status != 0
  bool ok() const { return status == 0; }
  // The kernel's commands depend on data it read (sc_peek, padded gathers):
  // every run of it must be functional (see device::set_functional).
  bool data_dependent = false;
  bool needs_functional = false;  // set with the error of such a run in timing-only mode

  double cycles = 0;  // launches included
  double us = 0;
  int launches = 0;
  uint64_t commands = 0;
  uint64_t issued = 0;        // commands that cost an issue slot
  double max_issue_cycles = 0;  // busiest scalar core, summed over launches

  std::array<double, n_engines> busy{};  // engine cycles summed over PEs
  std::array<double, n_engines> utilisation{};  // busy / (PEs * cycles)
  std::array<double, n_stalls> stalls{};
  double dram_read = 0, dram_write = 0, sram_read = 0, sram_write = 0;  // bytes on the resource
  double noc_bytes = 0;
  double ls_bytes = 0;     // bytes engines moved in local memory
  double macs = 0;         // DPE multiply-accumulates
  double dpe_max_pe_busy = 0;  // busiest PE's DPE cycles, summed over launches
  // Load imbalance: cycles PEs of a launch sat done while another still ran
  // (its end minus theirs, summed over PEs and launches), of pe_cycles
  // (PEs of a launch times its length, summed).
  double pe_done_cycles = 0, pe_cycles = 0;
  double imbalance = 0;  // pe_done_cycles / pe_cycles (finish)
  // Memory bandwidth unused: over the launches (after their launch cost),
  // the cycles the busiest memory level (SRAM, DRAM or the NoC) was not
  // moving bytes at its peak, weighted by the share it left unused; of
  // those, the cycles before the first transfer began (head) and after the
  // last read (a transfer into a PE) ended (tail), summed over launches.
  // Shares of all cycles, launches included (finish): for a memory-bound
  // kernel, what it loses to the roofline besides the launch.
  double mem_unused_cycles = 0, mem_head_cycles = 0, mem_tail_cycles = 0;
  double mem_unused = 0, mem_head = 0, mem_tail = 0;

  bound_class bound = bound_class::none;

  // The time no schedule can beat: max of compute, DRAM, SRAM, NoC and issue
  // floors, plus the launch costs.
  double lower_bound_cycles(const params& p) const;
  // Fill utilisation, us and the bound class from the raw sums.
  void finish(const params& p);
  std::string summary() const;
};

}  // namespace kevolve::emu::mtia
