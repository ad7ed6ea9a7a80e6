// The evaluator's profiling pass (cuda): a verified candidate runs once more
// under Nsight Compute, on the largest timed shape, and the counters become
// that shape's `metrics` and `profile`. The pass never changes a verdict's
// status or fitness; when ncu cannot profile on this node, the first
// failure says why and the pass is off for the rest of the evaluator's life.
#include <algorithm>

#include "common/fs.h"
#include "common/log.h"
#include "eval/backends/backend.h"
#include "eval/backends/ncu_profiler.h"
#include "eval/evaluator_parts.h"
#include "eval/generators.h"
#include "eval/task_data.h"

namespace kevolve::eval {

using std::chrono::milliseconds;

namespace {

// Kernels of the profiled call that ncu measures (each costs its replay passes).
constexpr int kMaxProfiledLaunches = 16;

// ncu asks the driver once per metric group; one query per process is enough.
expected<std::vector<std::string>> supported_once(const std::string& ncu) {
  static const auto metrics = ncu::supported_metrics(ncu, std::chrono::seconds(60));
  return metrics;
}

}  // namespace

void evaluator::configure_ncu() {
  if (!backend_->descriptor().traits.ncu_profiles || options_.verify_only || !options_.ncu.value_or(true)) return;
  const std::string path = ncu::find_ncu();
  if (path.empty() || !std::filesystem::exists(path)) {
    ncu_note_ = "Nsight Compute (ncu) not found: set KEVOLVE_NCU or put ncu on PATH";
    if (options_.ncu.value_or(false)) log::warn("{}: {}", op_.name, ncu_note_);
    return;
  }
  auto metrics = supported_once(path);
  if (!metrics) {
    ncu_note_ = metrics.error().message;
    log::warn("no Nsight Compute metrics for {}: {}", op_.name, ncu_note_);
    return;
  }
  ncu_path_ = path;
  ncu_metrics_ = *metrics;
}

expected<std::unique_ptr<evaluator::ncu_worker>> evaluator::start_ncu_worker() {
  auto dir = temp_dir::create("kevolve-ncu-");
  if (!dir) return tl::unexpected(dir.error());
  const std::filesystem::path log_file = dir->path() / "ncu.csv";
  worker_options wo = candidate_worker_options();
  wo.launcher = ncu::launcher(ncu_path_, ncu_metrics_, log_file, kMaxProfiledLaunches);
  // Counters are admin-only on most nodes: the worker keeps the evaluator's
  // user (seccomp and limits stay). Nothing it prints is read, and nothing
  // it does here can change the verdict it already has.
  wo.keep_user = true;
  auto w = worker_client::start(wo, {&data_->region_a()}, 1);
  if (!w) return tl::unexpected(w.error());
  return std::unique_ptr<ncu_worker>(new ncu_worker{std::move(*dir), log_file, std::move(*w)});
}

void evaluator::profile_with_ncu(const std::filesystem::path& library, verdict& v, run_totals& totals) {
  if (ncu_path_.empty() || !ncu_note_.empty()) return;
  // The largest timed shape: the one a user's traffic looks like.
  size_t best = data_->num_problems();
  for (size_t p = 0; p < data_->num_problems(); ++p)
    if (!data_->problem(p).inst.holdout &&
        (best == data_->num_problems() || data_->problem(p).inst.bytes > data_->problem(best).inst.bytes))
      best = p;
  if (best == data_->num_problems()) return;
  auto sv = std::find_if(v.shapes.begin(), v.shapes.end(),
                         [&](const shape_verdict& s) { return s.shape == data_->problem(best).inst.shape_name && !s.holdout; });
  if (sv == v.shapes.end()) return;

  phase_clock clock(totals.phases, "Nsight Compute profile");
  auto fail = [&](const std::string& why) {
    ncu_note_ = why;
    log::warn("Nsight Compute profiling is off for {} from now on: {}", op_.name, why);
  };
  std::unique_ptr<ncu_worker> nw = std::move(ncu_spare_);
  if (!nw || !nw->worker->still_running()) {
    auto started = start_ncu_worker();
    if (!started) return fail(started.error().message);
    nw = std::move(*started);
  }
  // The next pass's worker starts once this one is done, whatever its outcome.
  struct restart {
    evaluator& e;
    ~restart() {
      if (!e.options_.prestart_worker || !e.ncu_note_.empty()) return;
      if (auto next = e.start_ncu_worker()) e.ncu_spare_ = std::move(*next);
    }
  } restart_after{*this};
  if (auto r = nw->worker->load({library}); !r) return fail(r.error().message);
  const std::filesystem::path& log_file = nw->log_file;
  auto& w = nw->worker;
  // Replays save and restore the kernel's memory once per counter pass.
  const milliseconds timeout = std::max(options_.call_timeout * 10, milliseconds(120000));
  const size_t p = best;
  // Where a pass's time goes, beside its total.
  phase_clock setup_clock(totals.phases, "Nsight Compute: worker ready and inputs on the device");
  auto setup = w->setup(data_->candidate_setup(p), timeout);
  if (!setup.ok()) return fail("the worker under ncu did not start: " + setup.detail);
  setup_clock.stop();
  if (auto r = data_->begin_candidate(p); !r) return fail(r.error().message);
  if (auto r = data_->ensure_inputs(p, 0, data_->set_seed(p, 0), 0); !r) return fail(r.error().message);
  data_->poison_outputs(p, 0, poison_byte(0));
  phase_clock call_clock(totals.phases, "Nsight Compute: the profiled call (replays)");
  auto out = w->call(0, 0, timeout);
  call_clock.stop();
  phase_clock exit_clock(totals.phases, "Nsight Compute: ncu's exit and report");
  const auto exit = w->wait_exit(timeout);
  exit_clock.stop();
  if (const std::string damage = data_->finish_candidate(p); !damage.empty())
    log::warn("{}: the kernel profiled by ncu {}; its inputs are regenerated", op_.name, damage);
  if (!out.ok()) {  // ncu's own account of it, where its log has one
    std::string why = "the call under ncu failed: " + out.detail;
    if (auto text = read_file(log_file))
      if (auto said = ncu::parse_csv(*text); !said) why += " (" + said.error().message + ")";
    return fail(why);
  }
  auto text = read_file(log_file);
  if (!text) return fail("ncu wrote no results" + (exit ? "" : ": " + exit.error().message));
  auto prof = ncu::parse_csv(*text);
  if (!prof) return fail(prof.error().message);
  sv->metrics = prof->metrics;
  sv->profile = prof->summary;
}

}  // namespace kevolve::eval
