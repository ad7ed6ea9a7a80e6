// The subcommands of the kevolve binary. Each returns the process exit code.
#pragma once

#include "cli/options.h"

namespace kevolve::app {

int run_sweep(const cli::run_command& cmd);
int run_report(const cli::report_command& cmd);
int run_status(const cli::status_command& cmd);
int run_merge(const cli::merge_command& cmd);
int run_split(const cli::split_command& cmd);
int run_eval(const cli::eval_command& cmd);
int run_ops(const cli::ops_command& cmd);
int run_doctor(const cli::doctor_command& cmd);
int run_kb(const cli::kb_command& cmd);
int run_export(const cli::export_command& cmd);

// Prints "error: <message>" to stderr and returns the exit code for it.
int report_error(const error& e);

}  // namespace kevolve::app
