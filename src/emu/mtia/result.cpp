#include "emu/mtia/result.h"

#include <algorithm>
#include <cstdio>

namespace kevolve::emu::mtia {

const char* engine_name(int e) {
  static const char* names[] = {"fi_in", "fi_out", "dpe", "re", "se", "vec", "mlu"};
  return e >= 0 && e < n_engines ? names[e] : e == scalar_core ? "scalar core" : "none";
}

const char* stall_name(int s) {
  static const char* names[] = {"issue", "input", "output", "dma_latency", "bandwidth", "barrier"};
  return s >= 0 && s < n_stalls ? names[s] : "?";
}

const char* to_string(bound_class b) {
  switch (b) {
    case bound_class::none: return "none";
    case bound_class::compute: return "compute";
    case bound_class::sram: return "sram";
    case bound_class::dram: return "dram";
    case bound_class::noc: return "noc";
    case bound_class::issue: return "issue";
    case bound_class::latency: return "latency";
  }
  return "?";
}

double run_result::lower_bound_cycles(const params& p) const {
  const double compute = macs / (p.dpe_macs_per_cycle * p.pes());
  const double dram = (dram_read + dram_write) / p.dram_effective_bytes_per_cycle();
  const double sram = (sram_read + sram_write) / p.sram_bytes_per_cycle;
  const double noc = noc_bytes / p.noc_bytes_per_cycle;
  return std::max({compute, dram, sram, noc, max_issue_cycles}) + launches * p.launch_cycles;
}

void run_result::finish(const params& p) {
  us = p.cycles_to_us(cycles);
  const double denom = cycles > 0 ? cycles * p.pes() : 1;
  for (int e = 0; e < n_engines; ++e) utilisation[e] = busy[e] / denom;
  imbalance = pe_cycles > 0 ? pe_done_cycles / pe_cycles : 0;
  mem_unused = cycles > 0 ? mem_unused_cycles / cycles : 0;
  mem_head = cycles > 0 ? mem_head_cycles / cycles : 0;
  mem_tail = cycles > 0 ? mem_tail_cycles / cycles : 0;
  if (!ok() || cycles <= 0) {
    bound = bound_class::none;
    return;
  }
  // The resource closest to saturation names the bound.
  double best = 0;
  bound = bound_class::latency;
  auto consider = [&](double frac, bound_class b) {
    if (frac > best) best = frac, bound = b;
  };
  double compute = dpe_max_pe_busy / cycles;
  for (int e : {int(dpe), int(re), int(se), int(vec), int(mlu)}) compute = std::max(compute, utilisation[e]);
  consider(compute, bound_class::compute);
  consider((dram_read + dram_write) / (p.dram_effective_bytes_per_cycle() * cycles), bound_class::dram);
  consider((sram_read + sram_write) / (p.sram_bytes_per_cycle * cycles), bound_class::sram);
  consider(noc_bytes / (p.noc_bytes_per_cycle * cycles), bound_class::noc);
  consider(max_issue_cycles / cycles, bound_class::issue);
  if (best < 0.5) bound = bound_class::latency;
}

std::string run_result::summary() const {
  char buf[512];
  if (!ok()) {
    std::snprintf(buf, sizeof buf, "error %d: %s", status, message.c_str());
    return buf;
  }
  std::string s;
  std::snprintf(buf, sizeof buf, "%.0f cycles (%.2f us), %d launch(es), %llu commands, bound: %s\n", cycles, us,
                launches, static_cast<unsigned long long>(commands), to_string(bound));
  s += buf;
  std::snprintf(buf, sizeof buf, "PEs done while another ran (load imbalance): %.1f%% of PE time\n", 100 * imbalance);
  s += buf;
  std::snprintf(buf, sizeof buf,
                "memory bandwidth unused: %.1f%% of the run (%.1f%% before the first transfer, %.1f%% after the "
                "last read, %.1f%% between)\n",
                100 * mem_unused, 100 * mem_head, 100 * mem_tail, 100 * (mem_unused - mem_head - mem_tail));
  s += buf;
  s += "utilisation:";
  for (int e = 0; e < n_engines; ++e) {
    std::snprintf(buf, sizeof buf, " %s %.1f%%", engine_name(e), 100 * utilisation[e]);
    s += buf;
  }
  std::snprintf(buf, sizeof buf, "\nbytes: dram r %.0f w %.0f, sram r %.0f w %.0f, noc %.0f; macs %.0f\nstalls:",
                dram_read, dram_write, sram_read, sram_write, noc_bytes, macs);
  s += buf;
  for (int i = 0; i < n_stalls; ++i) {
    std::snprintf(buf, sizeof buf, " %s %.0f", stall_name(i), stalls[i]);
    s += buf;
  }
  return s + "\n";
}

}  // namespace kevolve::emu::mtia
