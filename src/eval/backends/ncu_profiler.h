// Nsight Compute (`ncu`) as the CUDA evaluator's profiler: a verified
// candidate's worker is started once more under `ncu --clock-control none`,
// runs one call of the largest timed shape, and ncu's hardware counters for
// the kernels that call launched become the shape's `metrics` (short names
// below) and a one-line `profile`. The worker keeps its sandbox; ncu is only
// the process that starts it. Never part of a verdict's status or fitness.
//
// Short names (values as ncu reports them; percentages 0-100):
//   duration_us         sum of the call's kernels' GPU time
//   kernels             kernels the call launched (profiled, at most max_launches)
//   dram_pct            DRAM throughput, % of peak (duration-weighted over kernels)
//   dram_gbs            DRAM bytes read + written / duration_us
//   l2_hit_pct, l1_hit_pct  sector hit rates
//   sm_pct              SM throughput, % of peak
//   occupancy_pct       achieved active warps, % of the SM's maximum
//   tensor_pct          tensor pipe active, % of peak (mma or wgmma, the larger)
//   fma_pct             FMA pipe active, % of peak
//   registers           registers per thread (the largest kernel's)
//   stall_<reason>      warps stalled on <reason> per issued instruction
//                       (long_scoreboard, short_scoreboard, barrier,
//                       mio_throttle, lg_throttle, math_pipe, wait, not_selected)
#pragma once

#include <chrono>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "common/error.h"

namespace kevolve::eval::ncu {

// KEVOLVE_NCU, else `ncu` on PATH, else the CUDA toolkit's; empty: none found.
std::string find_ncu();

// Every ncu metric kevolve asks for, in a stable order.
const std::vector<std::string>& wanted_metrics();

// The metric names `ncu --query-metrics` lists (the first word of each row).
std::vector<std::string> parse_metric_list(const std::string& query_output);

// The wanted metrics this ncu and GPU know (asking for an unknown one fails
// the whole run): runs `ncu --query-metrics` once.
expected<std::vector<std::string>> supported_metrics(const std::string& ncu, std::chrono::seconds timeout);

// The arguments that make ncu start `program` (appended after them) and
// write its counters as CSV to `log_file`.
std::vector<std::string> launcher(const std::string& ncu, const std::vector<std::string>& metrics,
                                  const std::filesystem::path& log_file, int max_launches);

struct profile {
  std::map<std::string, double> metrics;  // short names (see above)
  std::string summary;                    // one line for people and prompts
};

// ncu's CSV (the default "details" page: one row per kernel and metric).
// Errors: ncu's own ==ERROR== lines, or no kernel at all.
expected<profile> parse_csv(const std::string& text);

// "ncu: 2 kernels, 143.2 us; DRAM 87% of peak (3650 GB/s); ..."
std::string summarize(const std::map<std::string, double>& metrics);

}  // namespace kevolve::eval::ncu
