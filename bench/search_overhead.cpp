// Search overhead per evaluation at 10,000 nodes: selection (each policy),
// memory mode and context, synthesis of the child's code by the builtin
// synthesizer, and recording the verdict. Verdicts are drawn at random
// (nothing is compiled or run): what is timed is the search itself.
//
// usage: kevolve-bench-search [NODES]   (default 10000; target < 5 ms each)
#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "common/rng.h"
#include "eval/stats.h"
#include "search/engine.h"
#include "spec/operator_loader.h"
#include "synth/builtin_synthesizer.h"

using namespace kevolve;

int main(int argc, char** argv) {
  const int nodes = argc > 1 ? std::atoi(argv[1]) : 10000;
  auto op = spec::find_operator("softmax");
  auto synth = synth::builtin_synthesizer::create();
  if (!op || !synth) {
    std::fprintf(stderr, "error: %s\n", !op ? op.error().message.c_str() : synth.error().message.c_str());
    return 2;
  }
  std::printf("search overhead per evaluation with %d nodes (selection + memory + synthesis + record)\n", nodes);
  for (const char* policy : {"uct", "greedy", "tournament"}) {
    search::search_config c;
    c.policy.name = policy;
    c.stop.max_evaluations = nodes;
    auto engine = search::search_engine::create(c);
    if (!engine) return 2;
    rng verdicts(3);
    std::vector<double> late;  // the last 1000 evaluations: a tree of ~nodes
    double now = 0;
    for (int i = 0; i < nodes; ++i) {
      const auto t0 = std::chrono::steady_clock::now();
      auto x = engine->next(now);
      if (!x) break;
      synth::synthesis_request req;
      req.op = &*op;
      req.variant = &op->variants.front();
      req.mode = x->mode;
      req.seed = uint64_t(x->child);
      for (search::node_id id : x->context) {
        const auto& n = engine->nodes().at(id);
        synth::context_item item;
        item.id = id;
        item.code = n.code;
        item.result = n.result;
        item.fitness = n.fitness;
        item.bottleneck = "memory-bound";
        item.roofline_fraction = 0.3;
        req.context.push_back(std::move(item));
      }
      auto out = (*synth)->write(req);
      engine->set_code(x->child, out.origin, out.code);
      const bool ok = verdicts.uniform() < 0.8;
      engine->record(x->child, ok ? eval::status::ok : eval::status::wrong_result, ok ? 0.5 + 2 * verdicts.uniform() : 0.0,
                     ok ? "" : "wrong", ++now);
      const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      if (i >= nodes - 1000) late.push_back(s);
    }
    std::printf("  %-10s median %.3f ms, p90 %.3f ms, max %.3f ms over the last %zu evaluations (target < 5 ms)\n", policy,
                eval::percentile(late, 50) * 1e3, eval::percentile(late, 90) * 1e3, eval::percentile(late, 100) * 1e3,
                late.size());
  }
  return 0;
}
