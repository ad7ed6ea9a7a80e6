#include <signal.h>
#include <unistd.h>

#include <csignal>

#include <cstdio>
#include <ctime>
#include <filesystem>
#include <thread>

#include "app/commands.h"
#include "common/fs.h"
#include "eval/backends/cpu_probe.h"
#include "report/sparkline.h"
#include "report/summary.h"
#include "spec/sweep_spec.h"
#include "sweep/sweep_runner.h"
#include "synth/factory.h"

namespace kevolve::app {
namespace fs = std::filesystem;

namespace {

// SIGUSR1: checkpoint now. SIGTERM, SIGINT: checkpoint and stop (Slurm sends
// SIGTERM before a time limit or on preemption).
volatile std::sig_atomic_t checkpoint_signal = 0;
volatile std::sig_atomic_t stop_signal = 0;
void on_checkpoint_signal(int) { checkpoint_signal = 1; }
void on_stop_signal(int) { stop_signal = 1; }

void install_signal_handlers() {
  struct sigaction sa = {};
  sa.sa_handler = on_checkpoint_signal;
  ::sigaction(SIGUSR1, &sa, nullptr);
  sa.sa_handler = on_stop_signal;
  ::sigaction(SIGTERM, &sa, nullptr);
  ::sigaction(SIGINT, &sa, nullptr);
}

std::string default_store(const fs::path& config) {
  const std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y%m%d-%H%M%S", std::gmtime(&t));
  return config.stem().string() + "-" + buf + ".h5";
}

// A status line rewritten in place on a terminal (each task's last one kept);
// plain lines otherwise. A sparkline shows the task's best over evaluations.
void show_progress(const sweep::progress_event& p) {
  static const bool tty = ::isatty(1);
  static std::vector<std::vector<double>> best(p.tasks);
  static size_t last_task = p.task;
  best.resize(std::max(best.size(), p.tasks));
  best[p.task].push_back(p.best_speedup);
  const std::string line =
      "task " + std::to_string(p.task + 1) + "/" + std::to_string(p.tasks) + " " + p.task_id + ": evaluation " +
      std::to_string(p.evaluations) + (p.max_evaluations ? "/" + std::to_string(p.max_evaluations) : "") + ", best " +
      (p.best_speedup > 0 ? std::to_string(p.best_speedup).substr(0, 5) + "x" : "-") + " " +
      report::sparkline(best[p.task], 24) + ", " + std::to_string(p.evals_per_second).substr(0, 4) + " evaluations/s; " +
      p.last;
  if (tty && p.task != last_task) std::printf("\n");
  last_task = p.task;
  if (tty) std::printf("\r\033[K%s", line.c_str());
  else std::printf("%s\n", line.c_str());
  std::fflush(stdout);
}

}  // namespace

int run_sweep(const cli::run_command& cmd) {
  auto spec = spec::load_sweep(cmd.config);
  if (!spec) return report_error(spec.error());
  const int threads = spec->threads > 0 ? spec->threads : int(std::max(1u, std::thread::hardware_concurrency()));
  auto hw = eval::cpu_hardware_profile(threads, false);
  if (!hw) return report_error(hw.error());
  auto synthesizer = synth::make_synthesizer(spec->synthesizer);
  if (!synthesizer) return report_error(synthesizer.error());

  sweep::run_options options;
  options.resume = !cmd.resume.empty();
  options.store = options.resume ? cmd.resume : !cmd.store.empty() ? cmd.store : default_store(cmd.config);
  for (const auto& s : cmd.seed_from) options.seed_from.push_back(s);
  install_signal_handlers();
  options.checkpoint_requested = [] {
    const bool asked = checkpoint_signal != 0;
    checkpoint_signal = 0;
    return asked;
  };
  options.stop_requested = [] { return stop_signal != 0; };
  std::printf("sweep %s -> %s (%zu operators, %s)\n", cmd.config.c_str(), options.store.c_str(), spec->operators.size(),
              options.resume ? "resumed" : "new");
  sweep::sweep_runner runner(*spec, options, *hw, **synthesizer, show_progress);
  auto record = runner.run();
  if (::isatty(1)) std::printf("\n");
  if (!record) return report_error(record.error());
  if (runner.interrupted()) {
    std::printf("stopped by a signal; everything so far is in %s: continue with\n  kevolve run %s --resume %s\n",
                options.store.c_str(), cmd.config.c_str(), options.store.c_str());
    return 128 + SIGTERM;
  }

  const auto summary = report::summarize(*record);
  std::printf("\n%s", report::summary_text(summary).c_str());
  const fs::path base = fs::path(options.store).replace_extension("");
  for (const auto& [ext, text] : {std::pair{".summary.md", report::summary_markdown(summary)},
                                  std::pair{".summary.csv", report::summary_csv(summary)}}) {
    const fs::path out = base.string() + ext;
    if (auto w = write_file_atomic(out, text); !w) return report_error(w.error());
    std::printf("wrote %s\n", out.c_str());
  }
  return exit_ok;
}

}  // namespace kevolve::app
