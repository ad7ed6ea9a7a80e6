// The command line, parsed with Boost.Program_options into plain structs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/error.h"

namespace kevolve::cli {

struct eval_command {
  std::string op;                   // operator name or YAML path
  std::string backend = "cpu";
  std::string kernel;               // candidate source file
  std::string variant;              // empty: the operator's first variant
  std::vector<std::string> shapes;  // empty or "all": every timed shape
  bool json = false;
  uint64_t seed = 1;
  int threads = 0;
  int timeout_ms = 10000;
  double budget_seconds = 0.4;
  int trials = 3;
  std::string ncu = "auto";         // Nsight Compute counters (cuda): auto (when found), on, off
  std::string torch = "auto";       // PyTorch eager/compile: auto (on where the backend has a PyTorch), on, off
  std::string fitness;              // torch | baseline; empty: torch where PyTorch is timed
};

struct ops_command {
  std::string action;               // list | validate | import
  std::vector<std::string> files;   // validate: YAML files; import: one Python file
  bool compile = true;              // validate: also compile reference and baseline
  std::string name;                 // import: the operator's name (empty: from the file name)
  double scale = 0.0;               // import: 0 < scale <= 1 adds a smaller timed shape (0: none)
  std::string out = ".";            // import: where <name>.yaml and <name>.py go
  bool eval_mode = false;           // import: build the module in eval mode (dropout, BatchNorm)
};

struct run_command {
  std::string config;                  // sweep YAML
  std::string store;                   // empty: <config stem>-<UTC time>.h5 here
  std::string resume;                  // continue this store
  std::vector<std::string> seed_from;  // stores whose best kernels start each task
};

struct report_command {
  std::string store;
  std::string html;       // write the HTML report here
  bool markdown = false;  // print the summary as Markdown instead of text
  bool csv = false;       // print the summary as CSV instead of text
};

struct status_command {
  std::string store;
};

struct merge_command {
  std::string out;                  // the merged store to write
  std::vector<std::string> stores;  // the pieces
  bool force = false;               // replace an existing `out`
};

struct split_command {
  std::string config;  // the sweep YAML to split
  std::string by;      // operator | backend
  std::string out;     // directory for piece-NNN.yaml
};

struct doctor_command {
  bool remeasure = false;
  bool json = false;
  int threads = 0;
};

struct kb_command {
  std::string action;                 // list | search | promote | render
  std::string store;                  // promote: the sweep's store
  std::string op, variant;            // render: the operator (name or YAML) and dtype variant ("" = first)
  std::string template_name;          // render: "<backend>/<stem>" ("" = the preferred serving one)
  std::string params;                 // render: JSON object of parameters over the template's defaults
  double min_speedup = 1.05;          // promote: tasks whose best beats the baseline by this
  std::string dir;                    // promote: where skills go ("" = knowledge/skills)
  std::string query;                  // search: free text
  std::string backend, hardware, op_class;
  std::vector<std::string> triggers;  // search: diagnosis triggers
  int limit = 5;
};

struct export_command {
  std::string store;
  std::string format;   // sft | dpo | trajectory
  std::string out;      // "" stdout
  double min_fitness = 0;
  std::string op, backend;
};

struct command_line {
  std::string command;  // run | report | status | merge | split | eval | ops | doctor | kb | export | help | version
  std::string log_level = "warn";
  run_command run;
  report_command report;
  status_command status;
  merge_command merge;
  split_command split;
  eval_command eval;
  ops_command ops;
  doctor_command doctor;
  kb_command kb;
  export_command exp;
  std::string help_text;  // for help, and for usage errors
};

// Errors are usage errors (exit code 2) with a message naming the option.
expected<command_line> parse_command_line(int argc, const char* const* argv);

}  // namespace kevolve::cli
