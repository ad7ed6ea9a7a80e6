// How long a checkpoint and a resume take with a large search tree.
//
// Builds a sweep record with one task of N nodes (default 100,000), each with
// about B bytes of code (default 2048), a context of 0-3 nodes, failure
// reasons on every seventh node and three shape measurements on every other
// node. Then, R times each (default 3), it times write_store (HDF5 write,
// close, fsync, rename, directory fsync) and read_store (open, read, decode
// into a sweep_record), checks that the record read back is the one written,
// and prints the medians against the targets: checkpoint < 3 s, resume < 2 s.
//
// usage: kevolve-bench-store [--nodes N] [--code-bytes B] [--runs R]
//                            [--deflate L] [--dir DIR]
// --deflate L compresses the text blob (level 1-9; default 0, none).
// --dir DIR puts the store there (default: a temporary directory in $TMPDIR
// or /tmp); use it to measure another file system.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "common/fs.h"
#include "store/hdf5_store.h"

using namespace kevolve;
namespace fs = std::filesystem;

namespace {

using clock_type = std::chrono::steady_clock;
double seconds_since(clock_type::time_point t) { return std::chrono::duration<double>(clock_type::now() - t).count(); }

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[v.size() / 2];
}

// Code-like text: kernel idioms with varying names and constants, which
// deflate compresses about as well as real candidates (3-4x), not better.
std::string candidate_code(size_t id, size_t bytes, uint64_t& seed) {
  static const char* lines[] = {
      "  for (size_t i%d = 0; i%d < n; i%d += %d) {\n",
      "    __m256 v%d = _mm256_loadu_ps(x + i + %d);\n",
      "    acc%d = _mm256_fmadd_ps(v%d, w%d, acc%d);\n",
      "  }  // unroll %d\n",
      "  float m%d = -INFINITY;  // running max of block %d\n",
      "  y[i + %d] = std::exp(x[i + %d] - m) * inv_s%d;\n",
      "#pragma omp parallel for schedule(static, %d)\n",
      "  const float* row%d = a + size_t(r + %d) * lda;\n",
  };
  auto next = [&seed] {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    return seed >> 33;
  };
  std::string s = "// candidate " + std::to_string(id) + "\nextern \"C\" void kernel(const float* x, float* y, size_t n) {\n";
  char line[160];
  while (s.size() < bytes) {
    const int a = int(next() % 64), b = int(next() % 4096);
    std::snprintf(line, sizeof line, lines[next() % 8], a, b, a + 1, b % 16, a);
    s += line;
  }
  s.resize(bytes);
  return s;
}

store::sweep_record make_record(size_t nodes, size_t code_bytes) {
  store::sweep_record r;
  r.kevolve_version = "bench";
  r.config_yaml = "search: {policy: uct, stop: {max_evaluations: 100000}}\n";
  r.config_hash = "0123456789abcdef0123456789abcdef";
  r.created_at = "2024-05-01T12:00:00Z";
  store::task_record t;
  t.id = "softmax/fp32/cpu";
  t.op = "softmax";
  t.variant = "fp32";
  t.backend = "cpu";
  t.baseline = "softmax_reference";
  std::vector<search::node> ns(nodes);
  uint64_t seed = 42;
  for (size_t k = 0; k < nodes; ++k) {
    search::node& n = ns[k];
    n.id = search::node_id(k);
    n.parent = k == 0 ? search::kNoNode : search::node_id(seed % k);
    n.depth = k == 0 ? 0 : ns[size_t(n.parent)].depth + 1;
    n.mode = search::memory_mode(k % 4);
    n.state = k + 4 >= nodes ? search::node_state::pending : search::node_state::evaluated;
    n.result = k % 7 == 3 ? eval::status::compile_failed : eval::status::ok;
    n.fitness = n.result == eval::status::ok ? 1.0 + double(k % 997) / 100.0 : 0.0;
    n.origin = k == 0 ? "task" : (k % 2 ? "builtin" : "llm:qwen2.5-coder-32b");
    if (k > 0) n.code = candidate_code(k, code_bytes - code_bytes / 8 + (seed % (code_bytes / 4 + 1)), seed);
    if (n.result == eval::status::compile_failed)
      n.reason = "kernel.cpp:" + std::to_string(k % 80) + ":5: error: expected ';' before '}' token";
    for (size_t c = 0; k > 0 && c < k % 4; ++c) n.context.push_back(search::node_id(seed % k));
    n.created_s = double(k) * 0.5;
    n.finished_s = n.created_s + 2.0;
    n.visits = int64_t(k % 31);
    n.value_sum = double(k % 31) * 0.4;
    if (k > 0 && k % 2 == 0 && n.result == eval::status::ok)
      for (int s = 0; s < 3; ++s)
        t.measurements.push_back(store::shape_measurement{int64_t(k), "M=" + std::to_string(1024 << s) + " N=4096",
                                                          s == 2, "ok", 1e-7, 1e-3, 9e-4, 1.1e-3, 2e-3, 2.0, 120.0,
                                                          30.0, 0.6, "memory"});
  }
  for (size_t k = 1; k < nodes; ++k) ns[size_t(ns[k].parent)].children.push_back(search::node_id(k));
  t.search.nodes = search::tree::from_nodes(std::move(ns));
  t.search.random = {1, 2, 3, 4};
  t.search.evaluations = int64_t(nodes) - 4;
  r.tasks.push_back(std::move(t));
  return r;
}

bool same(const store::sweep_record& a, const store::sweep_record& b) {
  if (a.tasks.size() != b.tasks.size()) return false;
  for (size_t i = 0; i < a.tasks.size(); ++i) {
    const auto &x = a.tasks[i].search.nodes.nodes(), &y = b.tasks[i].search.nodes.nodes();
    if (x.size() != y.size() || a.tasks[i].measurements.size() != b.tasks[i].measurements.size()) return false;
    for (size_t k = 0; k < x.size(); ++k)
      if (x[k].code != y[k].code || x[k].parent != y[k].parent || x[k].context != y[k].context ||
          x[k].children != y[k].children || x[k].fitness != y[k].fitness || x[k].reason != y[k].reason)
        return false;
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  size_t nodes = 100000, code_bytes = 2048;
  int runs = 3;
  store::store_options options;
  std::string dir_arg;
  for (int i = 1; i < argc; ++i) {
    const bool has_value = i + 1 < argc;
    if (!std::strcmp(argv[i], "--nodes") && has_value) nodes = std::strtoul(argv[++i], nullptr, 10);
    else if (!std::strcmp(argv[i], "--code-bytes") && has_value) code_bytes = std::strtoul(argv[++i], nullptr, 10);
    else if (!std::strcmp(argv[i], "--runs") && has_value) runs = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--deflate") && has_value) options.text_deflate = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--dir") && has_value) dir_arg = argv[++i];
    else {
      std::fprintf(stderr, "usage: %s [--nodes N] [--code-bytes B] [--runs R] [--deflate L] [--dir DIR]\n", argv[0]);
      return 2;
    }
  }
  if (nodes < 8 || code_bytes < 64 || runs < 1) {
    std::fprintf(stderr, "error: need --nodes >= 8, --code-bytes >= 64, --runs >= 1\n");
    return 2;
  }
  expected<temp_dir> tmp = temp_dir::create("kevolve-bench-store-");
  if (!tmp) {
    std::fprintf(stderr, "error: %s\n", tmp.error().message.c_str());
    return 2;
  }
  const fs::path path = (dir_arg.empty() ? tmp->path() : fs::path(dir_arg)) / "bench_store.h5";

  auto t0 = clock_type::now();
  const store::sweep_record record = make_record(nodes, code_bytes);
  const double build_s = seconds_since(t0);
  uint64_t text_bytes = 0;
  for (const auto& n : record.tasks[0].search.nodes.nodes()) text_bytes += n.code.size();
  std::printf("store checkpoint: %zu nodes, %.1f MiB of code (avg %.0f B), %zu measurements, text deflate %d\n", nodes,
              double(text_bytes) / 1048576.0, double(text_bytes) / double(nodes), record.tasks[0].measurements.size(),
              options.text_deflate);
  std::printf("record built in %.2f s; store at %s\n\n", build_s, path.c_str());

  std::vector<double> writes, reads;
  for (int run = 0; run < runs; ++run) {
    t0 = clock_type::now();
    auto w = store::write_store(path, record, options);
    writes.push_back(seconds_since(t0));
    if (!w) {
      std::fprintf(stderr, "error: %s\n", w.error().message.c_str());
      return 2;
    }
    t0 = clock_type::now();
    auto back = store::read_store(path);
    reads.push_back(seconds_since(t0));
    if (!back) {
      std::fprintf(stderr, "error: %s\n", back.error().message.c_str());
      return 2;
    }
    if (!same(record, *back)) {
      std::fprintf(stderr, "error: the record read back differs from the one written\n");
      return 1;
    }
    std::printf("run %d: checkpoint (write+fsync+rename) %.3f s, resume (read) %.3f s\n", run + 1, writes.back(),
                reads.back());
  }
  const double w = median(writes), r = median(reads);
  std::error_code ec;
  const double mib = double(fs::file_size(path, ec)) / 1048576.0;
  std::printf("\nfile size %.1f MiB\n", mib);
  std::printf("%-34s %8s %8s\n", ("median of " + std::to_string(runs) + " runs").c_str(), "seconds", "target");
  std::printf("%-34s %8.3f %8s %s\n", "checkpoint (write+fsync+rename)", w, "< 3 s", w < 3.0 ? "ok" : "MISSED");
  std::printf("%-34s %8.3f %8s %s\n", "resume (read_store)", r, "< 2 s", r < 2.0 ? "ok" : "MISSED");
  fs::remove(path, ec);
  return 0;
}
