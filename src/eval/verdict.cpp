#include "eval/verdict.h"

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
      j["bottleneck"] = s.bottleneck;
      j["roofline_gbs"] = s.roofline_gbs;
      if (!s.profile.empty()) j["profile"] = s.profile;
      if (!s.metrics.empty()) j["metrics"] = s.metrics;
      side_json(j, "torch_eager", s.torch_eager);
      side_json(j, "torch_compile", s.torch_compile);
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
          {"overhead_phases", v.overhead_phases}};
}

}  // namespace kevolve::eval
