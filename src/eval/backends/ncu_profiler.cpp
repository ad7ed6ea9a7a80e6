#include "eval/backends/ncu_profiler.h"

#include <algorithm>
#include <cstring>
#include <cstdio>
#include <set>
#include <sstream>

#include "common/subprocess.h"
#include "eval/backends/gpu_common.h"

namespace kevolve::eval::ncu {
namespace {

// ncu metric -> kevolve's short name. The stall ratios and the two tensor
// pipes are folded further in aggregate().
struct metric_def {
  const char* ncu;
  const char* name;
};
constexpr metric_def kMetrics[] = {
    {"gpu__time_duration.sum", "duration_us"},
    {"dram__throughput.avg.pct_of_peak_sustained_elapsed", "dram_pct"},
    {"dram__bytes_read.sum", "dram_read_bytes"},
    {"dram__bytes_write.sum", "dram_write_bytes"},
    {"lts__t_sector_hit_rate.pct", "l2_hit_pct"},
    {"l1tex__t_sector_hit_rate.pct", "l1_hit_pct"},
    {"sm__throughput.avg.pct_of_peak_sustained_elapsed", "sm_pct"},
    {"sm__warps_active.avg.pct_of_peak_sustained_active", "occupancy_pct"},
    {"sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active", "tensor_mma_pct"},
    {"sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active", "tensor_wgmma_pct"},
    {"sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active", "fma_pct"},
    {"launch__registers_per_thread", "registers"},
    {"smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio", "stall_long_scoreboard"},
    {"smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio", "stall_short_scoreboard"},
    {"smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio", "stall_barrier"},
    {"smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio", "stall_mio_throttle"},
    {"smsp__average_warps_issue_stalled_lg_throttle_per_issue_active.ratio", "stall_lg_throttle"},
    {"smsp__average_warps_issue_stalled_math_pipe_throttle_per_issue_active.ratio", "stall_math_pipe"},
    {"smsp__average_warps_issue_stalled_wait_per_issue_active.ratio", "stall_wait"},
    {"smsp__average_warps_issue_stalled_not_selected_per_issue_active.ratio", "stall_not_selected"},
};

const char* short_name(const std::string& ncu_name) {
  for (const auto& m : kMetrics)
    if (ncu_name == m.ncu) return m.name;
  return nullptr;
}

// One CSV record (RFC 4180 quoting); ncu writes one record per line.
std::vector<std::string> split_csv(const std::string& line) {
  std::vector<std::string> out;
  std::string cur;
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') cur += '"', ++i;
      else if (c == '"') quoted = false;
      else cur += c;
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      out.push_back(std::move(cur));
      cur.clear();
    } else if (c != '\r') {
      cur += c;
    }
  }
  out.push_back(std::move(cur));
  return out;
}

// A value in the unit ncu printed, in kevolve's unit for the metric
// (microseconds for times, bytes for sizes, as-is otherwise). ncu versions
// spell units differently ("nsecond" or "ns", "byte" or "B"); with
// --print-units base a time is in nanoseconds and a size in bytes, so an empty
// unit means those. A time in a unit not known here is dropped, never guessed.
bool to_number(std::string text, const std::string& unit, bool is_time, double& out) {
  text.erase(std::remove(text.begin(), text.end(), ','), text.end());
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || end == text.c_str() || *end != '\0') return false;
  static const std::map<std::string, double> times = {
      {"", 1e-3},        {"nsecond", 1e-3}, {"ns", 1e-3},     {"usecond", 1.0}, {"us", 1.0},
      {"msecond", 1e3},  {"ms", 1e3},       {"second", 1e6},  {"s", 1e6}};
  static const std::map<std::string, double> sizes = {
      {"byte", 1.0},  {"B", 1.0},  {"Kbyte", 1e3},  {"KB", 1e3},  {"Mbyte", 1e6},
      {"MB", 1e6},    {"Gbyte", 1e9}, {"GB", 1e9}, {"Tbyte", 1e12}, {"TB", 1e12}};
  if (is_time) {
    const auto t = times.find(unit);
    if (t == times.end()) return false;
    out = v * t->second;
    return true;
  }
  const auto s = sizes.find(unit);
  out = v * (s == sizes.end() ? 1.0 : s->second);
  return true;
}

std::map<std::string, double> aggregate(const std::map<std::string, std::map<std::string, double>>& kernels) {
  std::map<std::string, double> out;
  double duration = 0, bytes = 0;
  std::map<std::string, double> weighted, weight;
  for (const auto& [id, m] : kernels) {
    auto d = m.find("duration_us");
    const double w = d != m.end() && d->second > 0 ? d->second : 0.0;
    duration += w;
    for (const auto& [name, value] : m) {
      if (name == "duration_us") continue;
      if (name == "dram_read_bytes" || name == "dram_write_bytes") {
        bytes += value;
      } else if (name == "registers") {
        out["registers"] = std::max(out["registers"], value);
      } else {
        // Kernels too short to time count once each.
        weighted[name] += value * (w > 0 ? w : 1.0);
        weight[name] += w > 0 ? w : 1.0;
      }
    }
  }
  for (const auto& [name, sum] : weighted) out[name] = weight[name] > 0 ? sum / weight[name] : 0.0;
  out["kernels"] = double(kernels.size());
  if (duration > 0) {
    out["duration_us"] = duration;
    if (bytes > 0) out["dram_gbs"] = bytes / (duration * 1e-6) / 1e9;
  }
  const auto mma = out.find("tensor_mma_pct"), wgmma = out.find("tensor_wgmma_pct");
  if (mma != out.end() || wgmma != out.end())
    out["tensor_pct"] = std::max(mma != out.end() ? mma->second : 0.0, wgmma != out.end() ? wgmma->second : 0.0);
  out.erase("tensor_mma_pct");
  out.erase("tensor_wgmma_pct");
  return out;
}

}  // namespace

std::string find_ncu() { return gpu::find_tool("KEVOLVE_NCU", "ncu", "/usr/local/cuda/bin/ncu"); }

const std::vector<std::string>& wanted_metrics() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (const auto& m : kMetrics) v.push_back(m.ncu);
    return v;
  }();
  return names;
}

std::vector<std::string> parse_metric_list(const std::string& query_output) {
  std::vector<std::string> out;
  std::istringstream in(query_output);
  for (std::string line; std::getline(in, line);) {
    const size_t b = line.find_first_not_of(" \t");
    if (b == std::string::npos) continue;
    const size_t e = line.find_first_of(" \t", b);
    const std::string word = line.substr(b, e == std::string::npos ? std::string::npos : e - b);
    // Metric names are lowercase with double-underscore units (dram__bytes_read).
    if (word.find("__") != std::string::npos && word.find_first_of("ABCDEFGHIJKLMNOPQRSTUVWXYZ=") == std::string::npos)
      out.push_back(word);
  }
  return out;
}

expected<std::vector<std::string>> supported_metrics(const std::string& ncu, std::chrono::seconds timeout) {
  auto r = run_subprocess({ncu, "--query-metrics"}, timeout_options(timeout));
  if (!r) return make_error(errc::toolchain_error, "cannot run " + ncu + ": " + r.error().message);
  if (!r->ok())
    return make_error(errc::toolchain_error, ncu + " --query-metrics failed (exit " + std::to_string(r->exit_code) +
                                                 "): " + r->output.substr(0, 400));
  // Listed names are bases; a wanted metric is its base plus a suffix (.sum, .pct, .avg.pct_of_...).
  const auto listed = parse_metric_list(r->output);
  const std::set<std::string> bases(listed.begin(), listed.end());
  std::vector<std::string> out;
  for (const auto& m : wanted_metrics()) {
    const std::string base = m.substr(0, m.find('.'));
    if (bases.count(base) || bases.count(m)) out.push_back(m);
  }
  if (out.empty()) return make_error(errc::toolchain_error, ncu + " knows none of the metrics kevolve asks for");
  return out;
}

std::vector<std::string> launcher(const std::string& ncu, const std::vector<std::string>& metrics,
                                  const std::filesystem::path& log_file, int max_launches) {
  std::string list;
  for (const auto& m : metrics) list += (list.empty() ? "" : ",") + m;
  // The worker's clocks as they are (what the timing saw), not locked to base.
  return {ncu,          "--clock-control", "none", "--metrics", list, "--csv", "--print-units", "base",
          "--launch-count", std::to_string(max_launches), "--log-file", log_file.string(), "--"};
}

expected<profile> parse_csv(const std::string& text) {
  std::istringstream in(text);
  std::vector<std::string> header;
  int id_col = -1, metric_col = -1, unit_col = -1, value_col = -1;
  std::map<std::string, std::map<std::string, double>> kernels;  // by ncu's launch ID
  std::string errors;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("==ERROR==", 0) == 0) {
      errors += (errors.empty() ? "" : "; ") + line.substr(9);
      continue;
    }
    if (line.rfind("==", 0) == 0 || line.empty()) continue;
    auto cells = split_csv(line);
    if (header.empty()) {
      for (size_t i = 0; i < cells.size(); ++i) {
        if (cells[i] == "ID") id_col = int(i);
        else if (cells[i] == "Metric Name") metric_col = int(i);
        else if (cells[i] == "Metric Unit") unit_col = int(i);
        else if (cells[i] == "Metric Value") value_col = int(i);
      }
      if (id_col < 0 || metric_col < 0 || value_col < 0) continue;  // not the header yet
      header = cells;
      continue;
    }
    if (cells.size() != header.size()) continue;
    const char* name = short_name(cells[size_t(metric_col)]);
    double v = 0;
    if (!name || !to_number(cells[size_t(value_col)], unit_col >= 0 ? cells[size_t(unit_col)] : "",
                            std::strcmp(name, "duration_us") == 0, v))
      continue;
    kernels[cells[size_t(id_col)]][name] = v;
  }
  if (!errors.empty()) return make_error(errc::toolchain_error, "ncu:" + errors);
  if (kernels.empty()) return make_error(errc::toolchain_error, "ncu profiled no kernel (did the call launch one?)");
  profile p;
  p.metrics = aggregate(kernels);
  p.summary = summarize(p.metrics);
  return p;
}

std::string summarize(const std::map<std::string, double>& m) {
  auto get = [&](const char* k) -> const double* {
    auto it = m.find(k);
    return it == m.end() ? nullptr : &it->second;
  };
  char buf[128];
  std::string s = "ncu:";
  if (auto k = get("kernels")) {
    std::snprintf(buf, sizeof buf, " %.0f kernel%s", *k, *k == 1 ? "" : "s");
    s += buf;
  }
  if (auto d = get("duration_us")) {
    std::snprintf(buf, sizeof buf, ", %.1f us", *d);
    s += buf;
  }
  if (auto d = get("dram_pct")) {
    std::snprintf(buf, sizeof buf, "; DRAM %.0f%% of peak", *d);
    s += buf;
    if (auto g = get("dram_gbs")) {
      std::snprintf(buf, sizeof buf, " (%.0f GB/s)", *g);
      s += buf;
    }
  }
  const std::pair<const char*, const char*> pct[] = {{"sm_pct", "SM"},          {"occupancy_pct", "occupancy"},
                                                     {"l2_hit_pct", "L2 hit"},  {"l1_hit_pct", "L1 hit"},
                                                     {"tensor_pct", "tensor"}, {"fma_pct", "FMA"}};
  for (const auto& [key, label] : pct)
    if (auto v = get(key)) {
      std::snprintf(buf, sizeof buf, "; %s %.0f%%", label, *v);
      s += buf;
    }
  if (auto r = get("registers")) {
    std::snprintf(buf, sizeof buf, "; %.0f registers", *r);
    s += buf;
  }
  // The largest stall reason says what the warps wait for.
  std::string top;
  double top_v = 0;
  for (const auto& [k, v] : m)
    if (k.rfind("stall_", 0) == 0 && v > top_v) top = k.substr(6), top_v = v;
  if (!top.empty()) {
    std::snprintf(buf, sizeof buf, "; top stall %s (%.2f warps per issue)", top.c_str(), top_v);
    s += buf;
  }
  return s;
}

}  // namespace kevolve::eval::ncu
