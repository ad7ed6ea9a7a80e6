// The distributed runtime's own cost: rank 0 drives N evaluator ranks whose
// evaluation is a fixed sleep (no kernels), over a sweep of the starter
// operators with the builtin synthesizer and periodic checkpoints, so what is
// measured is the coordinator, the actors and MPI. Prints throughput against
// the ideal (ranks / evaluation time), rank 0's CPU time per evaluation, and
// the CPU share of ranks that had nothing to do.
//
//   mpirun --oversubscribe -n 33 build/kevolve-bench-runtime [--eval-ms 200]
//          [--seconds 60] [--busy-ranks N] [--store PATH]
//
// --busy-ranks N: only N ranks get work (the sweep has N tasks with one
// evaluation in flight each), so the others show what an idle rank costs.
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <thread>

#include "actors/runtime.h"
#include "common/fs.h"
#include "common/hash.h"
#include "common/paths.h"
#include "spec/sweep_spec.h"
#include "sweep/scheduler.h"
#include "transport/launch.h"
#include "transport/mpi_transport.h"

namespace kv = kevolve;
namespace fs = std::filesystem;

namespace {

// Sleeps a fixed time, then calls the candidate correct with a fitness
// derived from its code (so the search has something to climb).
class fixed_time_service final : public kv::sweep::evaluation_service {
 public:
  fixed_time_service(int rank, int ms) : rank_(rank), ms_(ms) {}
  kv::sweep::eval_result evaluate(const kv::sweep::eval_request& r) override {
    std::this_thread::sleep_for(std::chrono::milliseconds(ms_));
    kv::sweep::eval_result out;
    out.id = r.id;
    out.rank = rank_;
    out.status = "ok";
    out.fitness = 1.0 + double(kv::hash_bytes(r.code.data(), r.code.size()) % 1000) / 1000.0;
    out.baseline = "synthetic";
    out.seconds = ms_ / 1000.0;
    return out;
  }

 private:
  int rank_, ms_;
};

double cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return double(u.ru_utime.tv_sec + u.ru_stime.tv_sec) + 1e-6 * double(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

std::string config_text(int tasks, int in_flight, double seconds) {
  // The twelve starter operators in both dtype variants where they have two:
  // enough tasks for `tasks`, cut to that many by listing fewer operators.
  const char* ops[] = {"softmax", "layernorm", "rmsnorm", "bias_gelu", "gemm_bias_relu", "conv1d", "embedding_bag_sum",
                       "bucketize", "feature_hash", "jagged_to_padded_dense", "dot_interaction", "sequence_truncate"};
  std::string list;
  for (int i = 0; i < std::min(tasks, 12); ++i) list += std::string(i ? ", " : "") + ops[i];
  return "sweep:\n  operators: [" + list + "]\n  backends: [cpu]\n  seed: 3\n"
         "search:\n  policy: uct\n  max_in_flight: " + std::to_string(in_flight) +
         "\n  stop: {max_seconds: " + std::to_string(seconds) + "}\n"
         "checkpoint:\n  every_seconds: 10\n"
         "runtime: {deadline_seconds: 60, silence_seconds: 30}\n";
}

}  // namespace

int main(int argc, char** argv) {
  int eval_ms = 200, busy = 0;
  double seconds = 60;
  std::string store = "runtime-bench.h5";
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--eval-ms")) eval_ms = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--seconds")) seconds = std::atof(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--busy-ranks")) busy = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--store")) store = argv[i + 1];
  }
  const auto launch = kv::transport::detect_launch();
  auto link = kv::transport::mpi_transport::init();
  if (!launch.under_launcher || !link) {
    std::fprintf(stderr, "run under mpirun with at least 2 ranks\n");
    return 2;
  }
  const int evaluators = (*link)->size() - 1;
  // Enough tasks and in-flight evaluations to keep every evaluator's queue
  // full, or exactly `busy` single-evaluation tasks.
  const int tasks = busy > 0 ? busy : 12;
  // Tasks start as evaluators need them, so give each enough in flight that
  // all of them start and together can hold two requests per evaluator.
  const int in_flight = busy > 0 ? 1 : (2 * evaluators + tasks - 1) / tasks + 1;
  const fs::path dir = fs::temp_directory_path() / ("kevolve-bench-runtime-" + std::to_string(launch.size));
  fs::create_directories(dir);
  const fs::path cfg = dir / "sweep.yaml";
  if ((*link)->rank() == 0) (void)kv::write_file_atomic(cfg, config_text(tasks, in_flight, seconds));
  // Every rank reads the same config; wait until rank 0 has written it.
  for (int i = 0; i < 200 && !fs::exists(cfg); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  auto spec = kv::spec::load_sweep(cfg);
  if (!spec) {
    std::fprintf(stderr, "%s\n", spec.error().message.c_str());
    return 2;
  }
  auto service = [eval_ms](int rank, const std::string&) { return std::make_shared<fixed_time_service>(rank, eval_ms); };
  if ((*link)->rank() != 0) {
    kv::actors::evaluator_run run;
    run.link = link->get();
    run.launch = launch;
    run.spec = &*spec;
    run.make_service = service;
    run.threads = 1;
    const auto [status, finalize] = kv::actors::run_evaluator_rank(run);
    (*link)->finalize(finalize);
    return status;
  }
  fs::remove(store);
  kv::sweep::run_options options;
  options.store = store;
  auto scheduler = kv::sweep::scheduler::create(*spec, options);
  if (!scheduler) {
    std::fprintf(stderr, "%s\n", scheduler.error().message.c_str());
    return 2;
  }
  kv::actors::coordinator_run run;
  run.scheduler = std::move(*scheduler);
  run.link = link->get();
  run.make_service = service;
  // Verdict times: throughput is measured while every task is running, from
  // 5 s after the start (ranks have said hello, evaluators are warm) until
  // the first task stops (from then on fewer requests are out).
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<double> verdicts;
  double first_done = 0;
  run.on_progress = [&](const kv::sweep::coordinator& c) {
    const double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    verdicts.push_back(t);
    if (c.progress().tasks_done > 0 && first_done == 0) first_done = t;
  };
  const double cpu0 = cpu_seconds();
  auto outcome = kv::actors::run_coordinator(std::move(run));
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const double cpu = cpu_seconds() - cpu0;
  if (!outcome) {
    std::fprintf(stderr, "%s\n", outcome.error().message.c_str());
    return 3;
  }
  int64_t evaluations = 0;
  double idle_cpu = 0, idle_uptime = 0;
  int idle_ranks = 0;
  for (const auto& r : outcome->record.ranks) {
    evaluations += r.evaluations;
    if (r.evaluations == 0) {
      idle_cpu += r.cpu_seconds;
      idle_uptime += r.uptime_seconds;
      ++idle_ranks;
    }
  }
  const int working = busy > 0 ? std::min(busy, evaluators) : evaluators;
  const double from = 5.0, to = first_done > from ? first_done : wall;
  int64_t in_window = 0;
  for (double t : verdicts) in_window += t >= from && t < to;
  const double ideal = working * (to - from) / (eval_ms / 1000.0);
  std::printf("evaluator ranks           %d (%d given work), evaluation %d ms, %d tasks, %d in flight per task\n", evaluators,
              working, eval_ms, tasks, in_flight);
  std::printf("wall time                 %.1f s\n", wall);
  std::printf("evaluations               %lld in all; %lld from %.0f s to %.1f s (all tasks running), ideal %.0f:\n"
              "                          %.1f%% of ideal throughput (target >= 90%%)\n",
              (long long)evaluations, (long long)in_window, from, to, ideal, 100.0 * double(in_window) / ideal);
  std::printf("rank 0 CPU per evaluation %.3f ms (%.2f s in all; target <= 1 ms)\n", 1e3 * cpu / double(std::max<int64_t>(1, evaluations)), cpu);
  if (idle_ranks)
    std::printf("idle ranks                %d, CPU %.2f%% of a core each (target < 5%%)\n", idle_ranks,
                100.0 * idle_cpu / std::max(1e-9, idle_uptime));
  (*link)->finalize(outcome->finalize);
  return 0;
}
