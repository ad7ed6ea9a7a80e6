// Prompt assembly time of the llm synthesizer (target: < 20 ms per prompt).
// For every catalog operator and every memory mode, builds prompts from a
// realistic context (the operator's example kernel as the parent, a compile
// error, memory-bound and compute-bound verdicts, siblings) with the shipped
// knowledge base and template, and prints the median and 90th percentile.
// The knowledge base is loaded once, as in a sweep; its load time is printed
// too. Usage: ./build/kevolve-bench-prompt [--repeats N] [--budget TOKENS]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "common/fs.h"
#include "common/paths.h"
#include "spec/operator_loader.h"
#include "synth/prompt_builder.h"

using namespace kevolve;
using clock_type = std::chrono::steady_clock;

namespace {

synth::context_item item(search::node_id id, eval::status s, double fitness, const std::string& code,
                         const std::string& bottleneck) {
  synth::context_item c;
  c.id = id;
  c.code = code;
  c.result = s;
  c.fitness = fitness;
  c.bottleneck = bottleneck;
  c.roofline_fraction = 0.3;
  if (s == eval::status::compile_failed) {
    c.reason = "compilation failed";
    for (int i = 0; i < 40; ++i) c.compile_diagnostics += "k.cpp:" + std::to_string(i) + ":5: error: 'v' was not declared in this scope\n";
  }
  return c;
}

double percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, size_t(p * double(v.size())))];
}

}  // namespace

int main(int argc, char** argv) {
  int repeats = 50, budget = 12000;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--repeats")) repeats = std::atoi(argv[i + 1]);
    if (!std::strcmp(argv[i], "--budget")) budget = std::atoi(argv[i + 1]);
  }
  const auto t0 = clock_type::now();
  auto kb = knowledge::knowledge_base::load();
  if (!kb) {
    std::fprintf(stderr, "error: %s\n", kb.error().message.c_str());
    return 3;
  }
  const double load_ms = std::chrono::duration<double, std::milli>(clock_type::now() - t0).count();
  auto tmpl = synth::prompt_template::load();
  auto ops = spec::load_catalog(spec::default_operator_dir());
  if (!tmpl || !ops) {
    std::fprintf(stderr, "error: %s\n", !tmpl ? tmpl.error().message.c_str() : ops.error().message.c_str());
    return 3;
  }
  auto shared = std::make_shared<const knowledge::knowledge_base>(std::move(*kb));
  std::printf("knowledge base: %zu documents loaded in %.1f ms; prompt budget %d tokens, %d repeats per case\n\n",
              shared->documents().size(), load_ms, budget, repeats);
  std::printf("%-24s %-17s %9s %9s %8s %6s\n", "operator", "mode", "median ms", "p90 ms", "tokens", "docs");
  std::vector<double> all, cold;
  for (const auto& op : *ops) {
    const std::string code = read_file(data_root() / "knowledge" / "examples" / "cpu" / (op.name + ".cpp")).value_or("// none\n");
    for (auto mode : {search::memory_mode::reset, search::memory_mode::inherit, search::memory_mode::compare_siblings,
                      search::memory_mode::merge}) {
      synth::prompt_builder builder(*tmpl, shared, budget);
      synth::synthesis_request r;
      r.op = &op;
      r.variant = &op.variants.front();
      r.backend = "cpu";
      r.mode = mode;
      if (mode != search::memory_mode::reset) {
        r.parent = 4;
        if (mode == search::memory_mode::inherit)
          r.context = {item(1, eval::status::ok, 1.1, code, "compute-bound"), item(2, eval::status::compile_failed, 0, code, ""),
                       item(4, eval::status::ok, 1.3, code, "memory-bound")};
        else
          r.context = {item(4, eval::status::ok, 1.3, code, "memory-bound"), item(7, eval::status::ok, 1.6, code, "memory-bound"),
                       item(8, eval::status::wrong_result, 0, code, "")};
      }
      std::vector<double> ms;
      synth::built_prompt p = builder.build(r);  // cold: reads the operator's YAML and the ABI header
      cold.push_back(p.ms);
      for (int k = 0; k < repeats; ++k) {
        p = builder.build(r);
        ms.push_back(p.ms);
      }
      all.insert(all.end(), ms.begin(), ms.end());
      std::printf("%-24s %-17s %9.3f %9.3f %8d %6zu\n", op.name.c_str(), search::to_string(mode), percentile(ms, 0.5),
                  percentile(ms, 0.9), p.tokens, p.documents.size());
    }
  }
  const double med = percentile(all, 0.5), p99 = percentile(all, 0.99), worst = percentile(all, 1.0);
  const double cold_med = percentile(cold, 0.5), cold_max = percentile(cold, 1.0);
  std::printf("\nwarm prompts (%zu): median %.3f ms, p99 %.3f ms, max %.3f ms; p99 is %.4f of the 20 ms target (%s)\n",
              all.size(), med, p99, worst, p99 / 20.0, p99 < 20.0 ? "met" : "MISSED");
  std::printf("cold prompts (%zu, first per builder: file reads): median %.3f ms, max %.3f ms (%s)\n", cold.size(),
              cold_med, cold_max, cold_max < 20.0 ? "met" : "MISSED");
  return 0;
}
