#include <cstdio>
#include <thread>

#include "app/commands.h"
#include "common/fs.h"
#include "common/log.h"
#include "eval/backends/backend.h"
#include "eval/evaluator.h"
#include "report/verdict_table.h"
#include "spec/operator_loader.h"

namespace kevolve::app {

int run_eval(const cli::eval_command& cmd) {
  auto op = spec::find_operator(cmd.op);
  if (!op) return report_error(op.error());
  auto source = read_file(cmd.kernel);
  if (!source) return report_error({errc::invalid_input, "--kernel: " + source.error().message});

  eval::evaluator_options o;
  o.threads = cmd.threads > 0 ? cmd.threads : int(std::max(1u, std::thread::hardware_concurrency()));
  o.seed = cmd.seed;
  o.shapes = cmd.shapes;
  o.call_timeout = std::chrono::milliseconds(cmd.timeout_ms);
  o.time_budget_seconds = cmd.budget_seconds;
  o.verify_trials = cmd.trials;
  if (cmd.torch != "auto") o.torch_baselines = cmd.torch == "on";
  o.fitness = cmd.fitness;
  if (cmd.ncu != "auto") o.ncu = cmd.ncu == "on";
  o.prestart_worker = false;  // one candidate: nothing to start ahead for

  auto desc = eval::require_backend(cmd.backend);
  if (!desc) return report_error({errc::invalid_input, "--backend: " + desc.error().message});
  auto hw = eval::backend_hardware(**desc, o.threads);
  // A node without a GPU cannot run a GPU backend: a usage error, not an internal one.
  if (!hw && (*desc)->traits.uses_device)
    return report_error({errc::invalid_input, "--backend " + cmd.backend + ": " + hw.error().message});
  if (!hw) return report_error(hw.error());
  auto ev = eval::evaluator::create(*op, cmd.variant, o, *hw);
  if (!ev) return report_error(ev.error());
  auto v = (*ev)->evaluate(*source);
  if (!v) return report_error(v.error());
  if (cmd.json) {
    std::printf("%s\n", eval::to_json(*v).dump(2).c_str());
  } else {
    std::fputs(report::verdict_table(*v).c_str(), stdout);
  }
  return v->ok() ? exit_ok : exit_verdict_not_ok;
}

}  // namespace kevolve::app
