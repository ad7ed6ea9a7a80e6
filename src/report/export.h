// Training data from a store, as JSONL (one JSON object per line):
//   sft         {"messages": [...prompt, {"role":"assistant","content":reply}], "metadata": {...}}
//               for each LLM reply whose kernel verified and improved on its parent
//   dpo         {"prompt": [...], "chosen": reply, "rejected": reply, "metadata": {...}}
//               from LLM-written siblings (same parent) with different measured fitness
//   trajectory  one object per task: every node in id order with its reward
#pragma once

#include <string>

#include "common/error.h"
#include "store/sweep_record.h"

namespace kevolve::report {

struct export_filter {
  double min_fitness = 0;  // sft/dpo: the (chosen) kernel's fitness; trajectory: the task's best
  std::string op;          // "" any operator
  std::string backend;     // "" any backend
};

// Errors: an unknown format (invalid_input).
expected<std::string> export_jsonl(const store::sweep_record& r, const std::string& format, const export_filter& f);

}  // namespace kevolve::report
