// kevolve: search for the fastest correct kernel of every operator, shape and
// backend. This file only dispatches to the subcommands.
#include <cstdio>

#include "app/commands.h"
#include "common/log.h"
#include "common/paths.h"

namespace kevolve::app {

int report_error(const error& e) {
  std::fprintf(stderr, "error: %s\n", e.message.c_str());
  return exit_code_for(e);
}

}  // namespace kevolve::app

int main(int argc, char** argv) {
  using namespace kevolve;
  auto cl = cli::parse_command_line(argc, argv);
  if (!cl) return app::report_error(cl.error());
  log::set_level(cl->log_level);
  if (cl->command == "help") {
    std::fputs(cl->help_text.c_str(), stdout);
    return exit_ok;
  }
  if (cl->command == "version") {
    std::printf("kevolve %s\n", kevolve_version());
    return exit_ok;
  }
  if (cl->command == "run") return app::run_sweep(cl->run);
  if (cl->command == "report") return app::run_report(cl->report);
  if (cl->command == "status") return app::run_status(cl->status);
  if (cl->command == "merge") return app::run_merge(cl->merge);
  if (cl->command == "split") return app::run_split(cl->split);
  if (cl->command == "eval") return app::run_eval(cl->eval);
  if (cl->command == "ops") return app::run_ops(cl->ops);
  if (cl->command == "doctor") return app::run_doctor(cl->doctor);
  if (cl->command == "kb") return app::run_kb(cl->kb);
  if (cl->command == "export") return app::run_export(cl->exp);
  return exit_bad_input;
}
