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
  auto dir = temp_dir::create("kevolve-ncu-");
  if (!dir) return fail(dir.error().message);
  const std::filesystem::path log_file = dir->path() / "ncu.csv";
  worker_options wo = backend_->worker(data_->threads(), options_.sandbox,
                                       data_->region_a().size() + options_.memory_limit_bytes + (uint64_t(1) << 30));
  wo.launcher = ncu::launcher(ncu_path_, ncu_metrics_, log_file, kMaxProfiledLaunches);
  // Counters are admin-only on most nodes: the worker keeps the evaluator's
  // user (seccomp and limits stay). Nothing it prints is read, and nothing
  // it does here can change the verdict it already has.
  wo.keep_user = true;
  auto w = worker_client::spawn(wo, {&data_->region_a()}, {library});
  if (!w) return fail(w.error().message);
  // Replays save and restore the kernel's memory once per counter pass.
  const milliseconds timeout = std::max(options_.call_timeout * 10, milliseconds(120000));
  const size_t p = best;
  auto setup = (*w)->setup(data_->candidate_setup(p), timeout);
  if (!setup.ok()) return fail("the worker under ncu did not start: " + setup.detail);
  if (auto r = data_->begin_candidate(p); !r) return fail(r.error().message);
  if (auto r = data_->ensure_inputs(p, 0, data_->set_seed(p, 0), 0); !r) return fail(r.error().message);
  data_->poison_outputs(p, 0, poison_byte(0));
  auto out = (*w)->call(0, 0, timeout);
  const auto exit = (*w)->wait_exit(timeout);
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
