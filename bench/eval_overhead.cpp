// How much of a candidate's evaluation is the evaluator's own work.
//
// For each operator, one evaluator (as in a search) evaluates several distinct
// candidates (the shipped example kernel with a different trailing comment,
// so each one really compiles). Per candidate it splits the wall time into
// compiling, running kernels (candidate and baseline requests, measured
// around each request) and the rest: the evaluator's overhead (input checks,
// poisoning, comparisons, worker start, the idle check). The first candidate
// also pays for the reference results, which later ones reuse; both are
// printed. It also times compile-cache hits.
//
// usage: kevolve-bench-eval-overhead [--candidates N] [--threads N] [OP...]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "common/fs.h"
#include "common/paths.h"
#include "eval/backends/cpu_backend.h"
#include "eval/backends/cpu_probe.h"
#include "eval/evaluator.h"
#include "eval/stats.h"
#include "spec/operator_loader.h"

using namespace kevolve;

int main(int argc, char** argv) {
  int candidates = 4;
  int threads = int(std::max(1u, std::thread::hardware_concurrency()));
  std::vector<std::string> ops;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--candidates") && i + 1 < argc) candidates = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--threads") && i + 1 < argc) threads = std::atoi(argv[++i]);
    else ops.push_back(argv[i]);
  }
  if (ops.empty()) ops = {"softmax", "layernorm", "embedding_bag_sum", "gemm_bias_relu"};

  auto hw = eval::cpu_hardware_profile(threads, false);
  if (!hw) {
    std::fprintf(stderr, "error: %s\n", hw.error().message.c_str());
    return 2;
  }
  std::printf("evaluator overhead per candidate (%d threads, %d candidates per operator)\n\n", threads, candidates);
  std::printf("%-20s %10s %12s %10s %10s %10s %10s %10s\n", "operator", "setup", "first-cand", "eval", "compile",
              "kernels", "overhead", "overhead%");
  std::vector<double> fractions;
  for (const auto& name : ops) {
    auto op = spec::find_operator(name);
    if (!op) {
      std::fprintf(stderr, "error: %s\n", op.error().message.c_str());
      return 2;
    }
    auto source = read_file(data_root() / "knowledge" / "examples" / "cpu" / (name + ".cpp"));
    if (!source) {
      std::fprintf(stderr, "error: %s\n", source.error().message.c_str());
      return 2;
    }
    eval::evaluator_options o;
    o.threads = threads;
    const auto t0 = std::chrono::steady_clock::now();
    auto ev = eval::evaluator::create(*op, "", o, *hw);
    if (!ev) {
      std::fprintf(stderr, "error: %s\n", ev.error().message.c_str());
      return 2;
    }
    const double setup = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::vector<double> total, compile, kernels, overhead, frac;
    std::map<std::string, std::vector<double>> phases;
    double first = 0;
    for (int c = 0; c < candidates; ++c) {
      const std::string variant = *source + "\n// benchmark candidate " + std::to_string(c) + " " +
                                  std::to_string(std::chrono::steady_clock::now().time_since_epoch().count()) + "\n";
      auto v = (*ev)->evaluate(variant);
      if (!v || !v->ok()) {
        std::fprintf(stderr, "error: %s: %s\n", name.c_str(), v ? v->reason.c_str() : v.error().message.c_str());
        return 1;
      }
      const double comp = v->compile.cached ? 0.0 : v->compile.seconds;
      if (c == 0) {
        first = v->seconds;
        continue;  // pays for the reference results; reported separately
      }
      total.push_back(v->seconds);
      compile.push_back(comp);
      overhead.push_back(v->overhead_seconds);
      kernels.push_back(v->seconds - comp - v->overhead_seconds);
      frac.push_back(v->overhead_seconds / (v->seconds - comp));
      double named = 0;
      for (const auto& [phase, s] : v->overhead_phases) {
        phases[phase].push_back(s);
        named += s;
      }
      phases["other (source scan, cache lookup, timing-loop bookkeeping)"].push_back(v->overhead_seconds - named);
    }
    const double f = eval::percentile(frac, 50);
    fractions.push_back(f);
    std::printf("%-20s %9.2fs %11.2fs %9.2fs %9.2fs %9.2fs %9.3fs %9.1f%%\n", name.c_str(), setup, first,
                eval::percentile(total, 50), eval::percentile(compile, 50), eval::percentile(kernels, 50),
                eval::percentile(overhead, 50), f * 100);
    for (const auto& [phase, s] : phases) std::printf("    %-62s %7.1f ms\n", phase.c_str(), eval::percentile(s, 50) * 1e3);
  }
  std::printf("\noverhead%% = overhead / (evaluation - compile), median over candidates 2..N\n");
  std::printf("worst operator: %.1f%% (target < 10%%)\n", *std::max_element(fractions.begin(), fractions.end()) * 100);

  // Compile-cache hits.
  eval::cpu_compiler compiler(cache_root() / "compile" / "cpu", std::chrono::seconds(120));
  auto src = read_file(data_root() / "knowledge" / "examples" / "cpu" / (ops.front() + ".cpp"));
  if (!src || !compiler.compile(*src, {})) return 2;
  std::vector<double> hits;
  for (int i = 0; i < 50; ++i) {
    const auto t = std::chrono::steady_clock::now();
    auto k = compiler.compile(*src, {});
    hits.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count());
    if (!k || !k->report.cached) return 2;
  }
  std::printf("compile-cache hit: median %.2f ms, max %.2f ms over 50 (target < 50 ms)\n",
              eval::percentile(hits, 50) * 1e3, *std::max_element(hits.begin(), hits.end()) * 1e3);
  return 0;
}
