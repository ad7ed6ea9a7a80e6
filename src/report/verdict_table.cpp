#include "report/verdict_table.h"

#include "report/text_table.h"

#include <algorithm>
#include <set>
#include <vector>

#include <fmt/format.h>

#include "eval/backends/registry.h"

namespace kevolve::report {

std::string format_seconds(double s) {
  if (s <= 0) return "-";
  if (s < 1e-3) return fmt::format("{:.1f} us", s * 1e6);
  if (s < 1.0) return fmt::format("{:.2f} ms", s * 1e3);
  return fmt::format("{:.2f} s", s);
}

namespace {

// "1.20 ms (2.05x)": its time and the candidate's speedup over it.
std::string side_cell(const eval::side_baseline& b) {
  return b.measured() ? fmt::format("{} ({:.2f}x)", format_seconds(b.time.median_s), b.speedup) : "-";
}

// Why a PyTorch baseline has no time, once per distinct reason.
std::string side_notes(const eval::verdict& v) {
  std::string out;
  std::set<std::string> seen;
  for (const auto& s : v.shapes)
    for (const auto& [what, b] : {std::pair{"torch eager", &s.torch_eager}, std::pair{"torch.compile", &s.torch_compile}})
      if (!b->note.empty() && seen.insert(b->note).second) out += fmt::format("{} at {}: {}\n", what, s.shape, b->note);
  return out;
}

}  // namespace

std::string verdict_table(const eval::verdict& v) {
  std::string out = fmt::format("operator {} ({}) on {} — {}\nbaseline: {}\n", v.op, v.variant, v.backend, v.hardware, v.baseline);
  const eval::backend_descriptor* be = eval::find_backend(v.backend);
  // An emulator's roofline is its profile's, whether or not the kernel ran.
  if (v.result == eval::status::compile_only && !(be && be->traits.emulated))
    out += "roofline: none (compile_only: never run here, no timing, no speedup)\n";
  else
    out += fmt::format(fmt::runtime((be ? *be : eval::host_backend()).roofline_caption), v.peak_bandwidth_gbs,
                       v.peak_gflops) + "\n";
  out += fmt::format("compile: {} ({}), {} vectorized loops, {} bytes of code\n\n",
                     v.compile.cached ? "cache hit" : format_seconds(v.compile.seconds),
                     v.result == eval::status::compile_failed ? "failed" : "ok", v.compile.vectorized_loops, v.compile.code_bytes);
  // The hip backend reports each kernel's resources per offload arch.
  if (std::any_of(v.compile.kernels.begin(), v.compile.kernels.end(), [](const auto& k) { return !k.target.empty(); })) {
    std::vector<std::vector<std::string>> rows = {{"kernel", "arch", "VGPRs", "AGPRs", "SGPRs", "LDS", "scratch/lane",
                                                   "spills (V/S)", "waves/SIMD"}};
    for (const auto& k : v.compile.kernels)
      rows.push_back({k.name.size() > 40 ? k.name.substr(0, 37) + "..." : k.name, k.target, std::to_string(k.registers),
                      std::to_string(k.agprs), std::to_string(k.sgprs), fmt::format("{} B", k.shared_bytes),
                      fmt::format("{} B", k.stack_bytes), fmt::format("{}/{}", k.vgpr_spills, k.sgpr_spills),
                      std::to_string(k.occupancy)});
    out += text_table(rows) + "\n";
  }
  if (be && !be->verdict_note.empty()) out += be->verdict_note + "\n\n";
  if (!v.shapes.empty()) {
    std::vector<std::vector<std::string>> rows = {{"shape", "status", "max err", "candidate", "baseline", "speedup",
                                                   "GB/s", "GFLOP/s", "roofline", "bottleneck"}};
    // A column per PyTorch baseline that has a time at some shape.
    bool eager = false, compiled = false, ceiling = false;
    for (const auto& s : v.shapes) eager |= s.torch_eager.measured(), compiled |= s.torch_compile.measured();
    // Beside the roofline: the attainable ceiling's fraction and what bounds
    // it, where the backend has one (mtia_emu).
    for (const auto& s : v.shapes) ceiling |= s.attainable_fraction > 0;
    if (ceiling) rows[0].insert(rows[0].begin() + 9, {"attainable", "bound"});
    if (compiled) rows[0].insert(rows[0].begin() + 6, "torch.compile");
    if (eager) rows[0].insert(rows[0].begin() + 6, "torch eager");
    for (const auto& s : v.shapes) {
      const bool timed = !s.holdout && s.candidate.runs > 0;
      rows.push_back({s.shape + (s.holdout ? " (holdout)" : ""), eval::to_string(s.result),
                      s.trials ? fmt::format("{:.2e}", s.max_abs_error) : "-",
                      timed ? fmt::format("{} ±{:.0f}%", format_seconds(s.candidate.median_s), s.candidate.spread() * 100) : "-",
                      timed ? fmt::format("{} ±{:.0f}%", format_seconds(s.baseline.median_s), s.baseline.spread() * 100) : "-",
                      timed ? fmt::format("{:.2f}x", s.speedup) : "-", timed ? fmt::format("{:.1f}", s.achieved_gbs) : "-",
                      timed ? fmt::format("{:.1f}", s.achieved_gflops) : "-",
                      timed ? fmt::format("{:.0f}%", s.roofline_fraction * 100) : "-", timed ? s.bottleneck : "-"});
      if (ceiling)
        rows.back().insert(rows.back().begin() + 9,
                           {timed && s.attainable_fraction > 0 ? fmt::format("{:.1f}%", s.attainable_fraction * 100) : "-",
                            timed && !s.bound.empty() ? s.bound : "-"});
      if (compiled) rows.back().insert(rows.back().begin() + 6, side_cell(s.torch_compile));
      if (eager) rows.back().insert(rows.back().begin() + 6, side_cell(s.torch_eager));
    }
    out += text_table(rows) + "\n";
    out += side_notes(v);
    for (const auto& s : v.shapes)
      if (!s.profile.empty()) out += fmt::format("profile {}: {}\n", s.shape, s.profile);
  }
  out += fmt::format("verdict: {}", eval::to_string(v.result));
  if (v.ok()) out += fmt::format(", fitness {:.3f} {}", v.fitness, eval::describe_fitness(v));
  out += "\n";
  if (!v.fitness_note.empty()) out += "note: " + v.fitness_note + "\n";
  if (!v.reason.empty()) out += "reason: " + v.reason + "\n";
  if (v.result == eval::status::compile_failed && !v.compile.diagnostics.empty())
    out += "compiler output:\n" + v.compile.diagnostics + (v.compile.diagnostics.back() == '\n' ? "" : "\n");
  return out;
}

}  // namespace kevolve::report
