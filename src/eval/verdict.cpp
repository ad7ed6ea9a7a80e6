#include "eval/verdict.h"

#include <fmt/format.h>

namespace kevolve::eval {

namespace {
nlohmann::json kernels_json(const std::vector<gpu_kernel_resources>& ks) {
  nlohmann::json a = nlohmann::json::array();
  for (const auto& k : ks) {
    nlohmann::json j = {{"name", k.name}, {"registers", k.registers}, {"barriers", k.barriers},
                        {"shared_bytes", k.shared_bytes}, {"stack_bytes", k.stack_bytes},
                        {"spill_store_bytes", k.spill_store_bytes}, {"spill_load_bytes", k.spill_load_bytes}};
    if (!k.target.empty())
      j.update({{"target", k.target}, {"vgprs", k.registers}, {"sgprs", k.sgprs}, {"agprs", k.agprs},
                {"lds_bytes", k.shared_bytes}, {"scratch_bytes_per_lane", k.stack_bytes}, {"occupancy_waves_per_simd", k.occupancy},
                {"vgpr_spills", k.vgpr_spills}, {"sgpr_spills", k.sgpr_spills}});
    a.push_back(std::move(j));
  }
  return a;
}
nlohmann::json timing_json(const timing_stats& t) {
  return {{"runs", t.runs}, {"median_s", t.median_s}, {"p10_s", t.p10_s}, {"p90_s", t.p90_s}, {"spread", t.spread()}};
}
// Present when measured or when there is a note on why not.
void side_json(nlohmann::json& j, const char* key, const side_baseline& b) {
  if (!b.measured() && b.note.empty()) return;
  nlohmann::json o = b.measured() ? timing_json(b.time) : nlohmann::json::object();
  if (b.measured()) o["speedup"] = b.speedup;
  if (!b.note.empty()) o["note"] = b.note;
  j[key] = std::move(o);
}
}  // namespace

nlohmann::json to_json(const verdict& v) {
  nlohmann::json shapes = nlohmann::json::array();
  for (const auto& s : v.shapes) {
    nlohmann::json j = {{"shape", s.shape},
                        {"holdout", s.holdout},
                        {"status", to_string(s.result)},
                        {"reason", s.reason},
                        {"trials", s.trials},
                        {"max_abs_error", s.max_abs_error},
                        {"max_error_ratio", s.max_error_ratio},
                        {"checked_against_baseline", s.checked_against_baseline}};
    if (!s.holdout) {
      j["candidate"] = timing_json(s.candidate);
      j["baseline"] = timing_json(s.baseline);
      j["speedup"] = s.speedup;
      j["bytes"] = s.bytes;
      j["flops"] = s.flops;
      j["achieved_gbs"] = s.achieved_gbs;
      j["achieved_gflops"] = s.achieved_gflops;
      j["roofline_fraction"] = s.roofline_fraction;
      j["baseline_roofline_fraction"] = s.baseline_roofline_fraction;
      if (s.attainable_fraction > 0) {
        j["attainable_fraction"] = s.attainable_fraction;
        j["bound"] = s.bound;
      }
      j["bottleneck"] = s.bottleneck;
      j["roofline_gbs"] = s.roofline_gbs;
      if (!s.profile.empty()) j["profile"] = s.profile;
      if (!s.metrics.empty()) j["metrics"] = s.metrics;
      side_json(j, "torch_eager", s.torch_eager);
      side_json(j, "torch_compile", s.torch_compile);
      j["fitness_speedup"] = s.fitness_speedup;
      j["fitness_over"] = describe_fitness(v, s);
    }
    shapes.push_back(std::move(j));
  }
  nlohmann::json compile = {{"cached", v.compile.cached},
                            {"seconds", v.compile.seconds},
                            {"code_bytes", v.compile.code_bytes},
                            {"vectorized_loops", v.compile.vectorized_loops},
                            {"diagnostics", v.compile.diagnostics}};
  if (!v.compile.target.empty()) {
    compile["target"] = v.compile.target;
    compile["kernels"] = kernels_json(v.compile.kernels);
  }
  return {{"status", to_string(v.result)},
          {"reason", v.reason},
          {"fitness", v.fitness},
          {"fitness_basis", v.fitness_basis},
          {"fitness_over", describe_fitness(v)},
          {"fitness_note", v.fitness_note},
          {"torch", v.torch_version},
          {"operator", v.op},
          {"variant", v.variant},
          {"backend", v.backend},
          {"kernel_hash", v.kernel_hash},
          {"baseline", v.baseline},
          {"hardware", {{"profile", v.hardware}, {"peak_bandwidth_gbs", v.peak_bandwidth_gbs}, {"peak_gflops", v.peak_gflops}}},
          {"compile", compile},
          {"shapes", shapes},
          {"seconds", v.seconds},
          {"overhead_seconds", v.overhead_seconds},
          {"overhead_phases", v.overhead_phases},
          {"kernel_phases", v.kernel_phases}};
}

double shape_verdict::torch_speedup() const {
  // Over the faster side: the smaller of the two speedups that were measured.
  const bool e = torch_eager.measured() && torch_eager.speedup > 0, c = torch_compile.measured() && torch_compile.speedup > 0;
  if (e && c) return std::min(torch_eager.speedup, torch_compile.speedup);
  return e ? torch_eager.speedup : c ? torch_compile.speedup : 0.0;
}

namespace {
std::string ms(const side_baseline& b) {
  if (!b.measured()) return b.note.rfind("unavailable", 0) == 0 ? "unavailable" : (b.note.empty() ? "not run" : "failed");
  return fmt::format("{:.3f} ms", b.time.median_s * 1e3);
}
}  // namespace

std::string describe_fitness(const verdict& v, const shape_verdict& s) {
  if (v.fitness_basis != "torch") return "× baseline (" + v.baseline + ")";
  return "× PyTorch (best of eager " + ms(s.torch_eager) + ", compile " + ms(s.torch_compile) + "; torch " +
         v.torch_version + ")";
}

std::string describe_fitness(const verdict& v) {
  if (v.fitness_basis != "torch") return "× baseline (" + v.baseline + ")";
  size_t timed = 0;
  for (const auto& s : v.shapes) timed += s.holdout ? 0 : 1;
  return fmt::format("× PyTorch (geomean over {} shape{} of the faster of eager and torch.compile; torch {})", timed,
                     timed == 1 ? "" : "s", v.torch_version);
}

}  // namespace kevolve::eval
