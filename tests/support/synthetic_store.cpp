// Writes a sweep store with one large synthetic search tree, for testing and
// timing the HTML report on trees of 10,000+ nodes without running a search.
//
// usage: kevolve-test-synthetic-store OUT.h5 NODES
//
// The tree grows like a UCT search: children of the best nodes, of random
// nodes and of the root; about 60 % of the nodes are correct, the rest fail
// with the evaluator's statuses and reasons; correct nodes have three timed
// shapes and about 1.5 KB of code. Deterministic.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "store/hdf5_store.h"

using namespace kevolve;

namespace {

uint64_t seed = 42;
uint64_t next() {
  seed = seed * 6364136223846793005ull + 1442695040888963407ull;
  return seed >> 33;
}
double uniform() { return double(next() % 1000000) / 1e6; }

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3 || std::atoll(argv[2]) < 1) {
    std::fprintf(stderr, "usage: kevolve-test-synthetic-store OUT.h5 NODES\n");
    return 2;
  }
  const int64_t count = std::atoll(argv[2]);
  store::sweep_record r;
  r.kevolve_version = "synthetic";
  r.config_yaml = "sweep: {operators: [gemm]}  # synthetic\n";
  r.config_hash = "synthetic";
  r.created_at = "2024-01-01T00:00:00Z";
  store::task_record t;
  t.id = "gemm/fp32/cpu";
  t.op = "gemm";
  t.variant = "fp32";
  t.backend = "cpu";
  t.baseline = "OpenBLAS cblas_sgemm";
  t.stop_reason = "evaluation budget of " + std::to_string(count) + " spent";
  auto& tree = t.search.nodes;
  std::vector<search::node_id> good;  // correct nodes, the better ones are preferred parents
  const eval::status failures[] = {eval::status::compile_failed, eval::status::wrong_result, eval::status::runtime_failed,
                                   eval::status::timeout, eval::status::crashed, eval::status::suspicious};
  const char* reasons[] = {"error: 'tile' was not declared in this scope (line 41)",
                           "max error 0.0312 at index 1837 of C (tolerance 1e-05)",
                           "kernel returned 3", "call exceeded 5000 ms", "killed by signal 11",
                           "faster than half the roofline floor"};
  for (int64_t i = 1; i <= count; ++i) {
    const double u = uniform();
    search::node_id parent = 0;
    if (u < 0.55 && !good.empty()) parent = good[good.size() - 1 - next() % std::min<size_t>(good.size(), 12)];
    else if (u < 0.85) parent = search::node_id(next() % tree.size());
    const auto mode = search::memory_mode(next() % 4);
    auto& n = tree.at(tree.add_child(parent, mode, {parent}, double(i)));
    n.origin = i % 7 == 0 ? "builtin:cpu/gemm (merge)" : "builtin:cpu/gemm";
    n.state = search::node_state::evaluated;
    n.finished_s = double(i) + 0.5;
    n.code = "// candidate " + std::to_string(i) + "\n";
    while (n.code.size() < 1500) n.code += "  for (int k = 0; k < K; k += " + std::to_string(next() % 64 + 1) + ") acc += a[k] * b[k];\n";
    if (uniform() < 0.6) {
      const double base = parent > 0 && tree.at(parent).ok() ? tree.at(parent).fitness : 1.0;
      n.result = eval::status::ok;
      n.fitness = std::clamp(base * std::exp(0.2 * (uniform() - 0.45)), 0.05, 6.0);
      good.push_back(n.id);
      std::sort(good.begin(), good.end(), [&](auto a, auto b) { return tree.at(a).fitness < tree.at(b).fitness; });
      const char* shapes[] = {"m256_n256_k256", "m1024_n512_k512", "m2048_n2048_k64"};
      for (int s = 0; s < 3; ++s) {
        store::shape_measurement m;
        m.node = n.id;
        m.shape = shapes[s];
        m.status = "ok";
        m.candidate_median_s = 1e-3 * (s + 1) / n.fitness;
        m.candidate_p10_s = m.candidate_median_s * 0.97;
        m.candidate_p90_s = m.candidate_median_s * 1.04;
        m.baseline_median_s = 1e-3 * (s + 1);
        m.speedup = n.fitness;
        m.achieved_gflops = 20.0 * (s + 1) * n.fitness;
        m.achieved_gbs = m.achieved_gflops / (4.0 + 20.0 * s);
        m.roofline_fraction = std::min(1.0, m.achieved_gflops / std::min(50.0 * (4.0 + 20.0 * s), 800.0));
        m.bottleneck = m.roofline_fraction < 0.1 ? "latency-bound" : s == 0 ? "memory-bound" : "compute-bound";
        t.measurements.push_back(m);
      }
    } else {
      const int k = int(next() % 6);
      n.result = failures[k];
      n.reason = reasons[k];
    }
  }
  t.search.evaluations = count;
  for (const auto& n : tree.nodes())
    if (n.ok()) t.search.best_fitness = std::max(t.search.best_fitness, n.fitness);
  t.seconds_spent = double(count);
  r.tasks.push_back(std::move(t));
  if (auto w = store::write_store(argv[1], r); !w) {
    std::fprintf(stderr, "error: %s\n", w.error().message.c_str());
    return 1;
  }
  std::printf("wrote %s: %lld nodes\n", argv[1], static_cast<long long>(count + 1));
  return 0;
}
