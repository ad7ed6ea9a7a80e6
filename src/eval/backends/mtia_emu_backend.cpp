#include "eval/backends/mtia_emu_backend.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <regex>

#include "common/fs.h"
#include "common/hash.h"
#include "common/paths.h"
#include "emu/mtia/result.h"
#include "eval/backends/mtia_emu_ceiling.h"
#include "eval/backends/mtia_emu_shared.h"
#include "spec/mtia_profile.h"

namespace kevolve::eval {

namespace {

// Why the engines sat idle before their commands (mtia.md 6.4: waiting on a
// CB, a DMA's latency, shared bandwidth, the issue slot, a barrier), each
// reason's share of all such cycles in percent; empty when none waited.
std::vector<std::pair<std::string, double>> stall_shares(const std::vector<int64_t>& w) {
  std::vector<std::pair<std::string, double>> out;
  double total = 0;
  for (int i = 0; i < emu::mtia::n_stalls; ++i) total += mtia_emu::from_word(w[size_t(mtia_emu::pw_stall + i)]);
  if (!(total > 0)) return out;
  for (int i = 0; i < emu::mtia::n_stalls; ++i)
    out.emplace_back(emu::mtia::stall_name(i), 100 * mtia_emu::from_word(w[size_t(mtia_emu::pw_stall + i)]) / total);
  return out;
}

}  // namespace
namespace fs = std::filesystem;

namespace {

struct rule {
  const char* name;
  std::regex re;
};

const std::vector<rule>& mtia_rules() {
  static const std::vector<rule> r = {
      // The handle's implementation pointer and function table lead to the
      // emulator's state (device memory, the clock); kernels use the
      // kv_mtia_* wrappers only.
      {"emulator internals", std::regex(R"((\bimpl\b|->\s*api\b|\.\s*api\b|\bkv_mtia_api\b|\bkevolve\s*::\s*emu\b|\bset_functional\b|\bend_run\b|\bbegin_run\b))")},
      {"emulator internals", std::regex(R"(#\s*include\s*[<"][^>"]*(emu/|\.\./|^/)[^>"]*[>"])")},
      {"include by absolute path", std::regex(R"(#\s*include\s*[<"]/)")},
      // Tensor addresses are device addresses; a host pointer made from one,
      // or from the device handle, can only be an attempt to bypass DMA.
      {"pointer reinterpretation", std::regex(R"(\breinterpret_cast\b)")},
      {"pointer reinterpretation",
       std::regex(R"(\(\s*(const\s+)?(volatile\s+)?(void|char|signed\s+char|unsigned\s+char|u?int(8|16|32|64)_t|uintptr_t|intptr_t|float|double|long|int|short|kv_mtia_device|uint16_t)\s*\*+\s*(const\s*)?\))")},
      {"pointer reinterpretation", std::regex(R"(\bbit_cast\b|\bmemcpy\s*\(\s*&)")},
  };
  return r;
}

}  // namespace

fs::path mtia_worker_executable() {
  if (const char* w = std::getenv("KEVOLVE_MTIA_WORKER"); w && *w) return w;
  return worker_executable().parent_path() / "kevolve-mtia-worker";
}

fs::path mtia_profile_path() {
  const char* n = std::getenv("KEVOLVE_MTIA_PROFILE");
  const std::string name = n && *n ? n : "mtia2i";
  return data_root() / "config" / "hardware" / (name + ".yaml");
}

expected<spec::hardware_profile> mtia_hardware_profile() {
  const fs::path file = mtia_profile_path();
  auto p = spec::load_mtia_profile(file);
  if (!p) return tl::unexpected(p.error());
  spec::hardware_profile hw;
  hw.name = p->name;
  hw.backend = "mtia_emu";
  hw.model = "emulated " + p->name + "-like chip, " + std::to_string(p->pes()) + " PEs at " +
             std::to_string(p->clock_ghz).substr(0, 4) + " GHz";
  hw.source = "emulator profile " + file.string();
  hw.threads = 1;
  hw.peak_bandwidth_gbs = mtia_emu::bandwidth_gbs(true, *p);
  hw.peak_gflops_fp32 = mtia_emu::peak_gflops(*p);
  hw.peak_gflops_matrix = hw.peak_gflops_fp32;
  hw.fingerprint = content_hash({read_file(file).value_or("")}).substr(0, 16);
  return hw;
}

std::vector<policy_violation> scan_mtia_source(const std::string& source, const std::vector<std::string>& allowed) {
  std::vector<policy_violation> out = scan_source(source, allowed);
  const std::string code = strip_comments_and_strings(source);
  for (const auto& r : mtia_rules())
    for (auto it = std::sregex_iterator(code.begin(), code.end(), r.re); it != std::sregex_iterator(); ++it) {
      const size_t pos = size_t(it->position(0));
      out.push_back({int(std::count(code.begin(), code.begin() + long(pos), '\n')) + 1, r.name, it->str(0)});
    }
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.line < b.line; });
  return out;
}

mtia_emu_backend::mtia_emu_backend(fs::path cache_dir, std::chrono::seconds timeout)
    : compiler_(std::move(cache_dir), timeout,
                {"-I" + (data_root() / "src" / "emu" / "mtia" / "include").string()},
                " | mtia.h " + content_hash({read_file(data_root() / "src" / "emu" / "mtia" / "include" / "kevolve" /
                                                       "mtia.h")
                                                 .value_or("")})
                                   .substr(0, 12)) {
  auto p = spec::load_mtia_profile(mtia_profile_path());
  if (p) params_ = *p;
  else params_error_ = p.error().message;
}

expected<abi_check> mtia_emu_backend::check_compiled(const compiled_kernel& k, const std::vector<std::string>&) const {
  auto elf = inspect_elf(k.library);
  if (!elf) return tl::unexpected(elf.error());
  abi_check c = check_candidate_library(*elf);
  if (c.result == status::compile_failed)
    c.reason = "the library does not export extern \"C\" int kevolve_kernel(const kv_args*, kv_mtia_device*)";
  return c;
}

worker_options mtia_emu_backend::worker(int threads, bool sandbox, uint64_t address_space_bytes) const {
  worker_options wo;
  wo.executable = mtia_worker_executable();
  wo.threads = threads;
  wo.sandbox = sandbox;
  // The device copy of one input set, 64 fiber stacks of 2 MiB and a trace
  // of up to 4M commands (~300 MB) on top of the shared regions.
  wo.address_space_bytes = address_space_bytes ? address_space_bytes + (uint64_t(3) << 30) : 0;
  wo.extra_args = {mtia_profile_path().string()};
  return wo;
}

spec::hardware_profile mtia_emu_backend::roofline_profile(const spec::hardware_profile& hw, double call_bytes) const {
  if (!params_error_.empty()) return hw;
  spec::hardware_profile out = hw;
  const bool sram = mtia_emu::in_sram(call_bytes, params_);
  out.peak_bandwidth_gbs = mtia_emu::bandwidth_gbs(sram, params_);
  return out;
}

ceiling mtia_emu_backend::attainable(const ceiling_work& work) const {
  if (!params_error_.empty()) return {};
  return mtia_emu::attainable_ceiling(params_, work);
}

std::string mtia_emu_backend::describe_profile(const std::vector<int64_t>& w, std::string* bottleneck) const {
  if (w.size() < size_t(mtia_emu::pw_count)) return {};
  using namespace mtia_emu;
  const auto bound = emu::mtia::bound_class(int(from_word(w[pw_bound])));
  if (bottleneck) {
    switch (bound) {
      case emu::mtia::bound_class::compute: *bottleneck = "compute-bound"; break;
      case emu::mtia::bound_class::sram:
      case emu::mtia::bound_class::dram:
      case emu::mtia::bound_class::noc: *bottleneck = "memory-bound"; break;
      case emu::mtia::bound_class::issue:
      case emu::mtia::bound_class::latency: *bottleneck = "latency-bound"; break;
      case emu::mtia::bound_class::none: break;
    }
  }
  char buf[160];
  std::snprintf(buf, sizeof buf, "%.0f cycles, %.0f commands, tensors in %s, bound: %s; busy:", from_word(w[pw_cycles]),
                from_word(w[pw_commands]), from_word(w[pw_sram]) > 0 ? "SRAM" : "DRAM", emu::mtia::to_string(bound));
  std::string s = buf;
  for (int e = 0; e < emu::mtia::n_engines; ++e) {
    std::snprintf(buf, sizeof buf, " %s %.0f%%", emu::mtia::engine_name(e), 100 * from_word(w[size_t(pw_util + e)]));
    s += buf;
  }
  std::snprintf(buf, sizeof buf, "; DRAM %.1f MB, SRAM %.1f MB", from_word(w[pw_dram_bytes]) / 1e6,
                from_word(w[pw_sram_bytes]) / 1e6);
  s += buf;
  const auto shares = stall_shares(w);
  if (!shares.empty()) {
    s += "; engines waited for:";
    for (const auto& [name, pct] : shares) {
      std::snprintf(buf, sizeof buf, " %s %.0f%%", name.c_str(), pct);
      s += buf;
    }
  }
  std::snprintf(buf, sizeof buf, "; PEs done while another ran (load imbalance): %.0f%% of PE time",
                100 * from_word(w[pw_imbalance]));
  s += buf;
  const double unused = from_word(w[pw_mem_unused]), head = from_word(w[pw_mem_head]), tail = from_word(w[pw_mem_tail]);
  std::snprintf(buf, sizeof buf,
                "; memory bandwidth unused: %.1f%% of the run (%.1f%% before the first transfer, %.1f%% after the "
                "last read, %.1f%% between)",
                100 * unused, 100 * head, 100 * tail, 100 * (unused - head - tail));
  return s + buf;
}

std::map<std::string, double> mtia_emu_backend::profile_metrics(const std::vector<int64_t>& w) const {
  std::map<std::string, double> m;
  if (w.size() < size_t(mtia_emu::pw_count)) return m;
  for (int e = 0; e < emu::mtia::n_engines; ++e)
    m[std::string(emu::mtia::engine_name(e)) + "_pct"] = 100 * mtia_emu::from_word(w[size_t(mtia_emu::pw_util + e)]);
  for (const auto& [name, pct] : stall_shares(w)) m["wait_" + name + "_pct"] = pct;
  m["imbalance_pct"] = 100 * mtia_emu::from_word(w[size_t(mtia_emu::pw_imbalance)]);
  m["mem_unused_pct"] = 100 * mtia_emu::from_word(w[size_t(mtia_emu::pw_mem_unused)]);
  m["mem_unused_head_pct"] = 100 * mtia_emu::from_word(w[size_t(mtia_emu::pw_mem_head)]);
  m["mem_unused_tail_pct"] = 100 * mtia_emu::from_word(w[size_t(mtia_emu::pw_mem_tail)]);
  return m;
}

}  // namespace kevolve::eval
