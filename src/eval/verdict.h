// What the evaluator says about a candidate. Status is data, never an
// exception; fitness is 0 unless every check at every shape passed.
#pragma once

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "eval/status.h"

namespace kevolve::eval {


struct timing_stats {
  int runs = 0;
  double median_s = 0.0;
  double p10_s = 0.0;
  double p90_s = 0.0;
  // Half the 10–90 percentile range, relative to the median (clamped at 0:
  // equal times may interpolate a rounding error apart, printed as "-0%").
  double spread() const { return median_s > 0 ? std::max(0.0, p90_s - p10_s) / 2.0 / median_s : 0.0; }
};

// PyTorch eager or torch.compile of the operator's `torch`, measured once per
// (operator, variant, shape, device, torch version) and cached on disk
// (torch_baseline.h); where the fitness is "torch", the faster of the two is
// what the candidate's speedup is over.
struct side_baseline {
  timing_stats time;     // runs == 0: no time
  double speedup = 0.0;  // its median / the candidate's
  std::string note;      // why there is no time: "unavailable: ..." or "wrong: ..."
  bool measured() const { return time.runs > 0; }
};

struct shape_verdict {
  std::string shape;
  bool holdout = false;  // verified only, never timed
  status result = status::skipped;
  std::string reason;
  int trials = 0;
  double max_abs_error = 0.0;
  double max_error_ratio = 0.0;     // max |out-ref| / (atol + rtol*|ref|); <= 1 passes
  bool checked_against_baseline = false;  // shape above reference_max_flops
  timing_stats candidate;
  timing_stats baseline;
  double speedup = 0.0;  // baseline median / candidate median
  double bytes = 0.0;
  double flops = 0.0;
  double achieved_gbs = 0.0;
  double achieved_gflops = 0.0;
  double roofline_fraction = 0.0;  // roofline floor time / candidate time
  double baseline_roofline_fraction = 0.0;
  // The attainable ceiling (eval/backends/ceiling.h: the roofline plus what
  // no kernel avoids on the device) / candidate time; 0: the backend has no
  // ceiling (only mtia_emu has one). `bound`: what bounds the ceiling.
  double attainable_fraction = 0.0;
  std::string bound;
  std::string bottleneck;  // memory-bound, compute-bound, latency-bound
  double roofline_gbs = 0.0;     // the bandwidth this shape's roofline uses (mtia_emu: SRAM or DRAM)
  std::string profile;     // backends that profile calls (mtia_emu): per-engine busy, bytes, bound class;
                           // cuda with Nsight Compute: a one-line summary of `metrics`
  std::map<std::string, double> metrics;  // hardware counters of the profiled call, by kevolve's short name
                                          // (cuda: Nsight Compute, see ncu_profiler.h); empty: not profiled
  side_baseline torch_eager;    // the operator's `torch` expression, eager
  side_baseline torch_compile;  // the same under torch.compile
  // What the fitness counts at this shape: the speedup over the faster of
  // eager and compile (fitness "torch") or over the baseline ("baseline").
  double fitness_speedup = 0.0;
  // The speedup over the faster PyTorch side (its median / the candidate's),
  // 0: neither measured.
  double torch_speedup() const;
};

// One device function's resources, from ptxas -v (cuda) or the AMDGPU
// backend's kernel-resource-usage remarks (hip: one entry per offload arch).
struct gpu_kernel_resources {
  std::string name;  // mangled entry name
  std::string target;  // hip: the offload arch (gfx90a ...); cuda: empty (the report's target)
  int registers = 0;   // cuda: registers per thread; hip: VGPRs per lane
  int barriers = 0;
  int shared_bytes = 0;  // static shared memory
  int stack_bytes = 0;   // local memory stack frame
  int spill_store_bytes = 0;
  int spill_load_bytes = 0;
  // hip only (shared_bytes is the LDS, stack_bytes the scratch per lane)
  int sgprs = 0;
  int agprs = 0;             // accumulation VGPRs (MFMA)
  int occupancy = 0;         // waves per SIMD
  int vgpr_spills = 0;
  int sgpr_spills = 0;
};

struct compile_report {
  bool cached = false;
  double seconds = 0.0;
  size_t code_bytes = 0;
  int vectorized_loops = 0;
  std::string diagnostics;  // compiler output (errors and warnings)
  std::string target;       // GPU backends: e.g. "sm_90"
  std::vector<gpu_kernel_resources> kernels;  // GPU backends: per entry function
};

struct verdict {
  status result = status::skipped;
  std::string reason;
  double fitness = 0.0;
  std::string op;
  std::string variant;
  std::string backend;
  std::string kernel_hash;
  std::string baseline;
  // What fitness is a speedup over: "torch" (the faster of PyTorch eager and
  // torch.compile per shape, geomean) or "baseline" (the plain baseline);
  // and why, where it is the baseline although PyTorch was asked for.
  std::string fitness_basis = "baseline";
  std::string fitness_note;
  std::string torch_version;  // "2.11.0+cu130, cpu" where PyTorch was timed
  std::string hardware;
  double peak_bandwidth_gbs = 0.0;
  double peak_gflops = 0.0;
  compile_report compile;
  std::vector<shape_verdict> shapes;
  double seconds = 0.0;           // whole evaluation, wall clock
  double overhead_seconds = 0.0;  // evaluation minus compiling and running kernels
  std::map<std::string, double> overhead_phases;  // where the overhead went, seconds
  std::map<std::string, double> kernel_phases;    // where the requests that ran kernels went, seconds

  bool ok() const { return result == status::ok; }
};

nlohmann::json to_json(const verdict& v);

// "× PyTorch (best of eager 0.412 ms, compile 0.390 ms; torch 2.11.0, cpu)"
// for one timed shape; "× baseline (<name>)" where that is the fitness.
std::string describe_fitness(const verdict& v, const shape_verdict& s);
// The same for the whole verdict: "× PyTorch (geomean over 2 shapes of the
// faster of eager and torch.compile; torch 2.11.0, cpu)".
std::string describe_fitness(const verdict& v);

}  // namespace kevolve::eval
