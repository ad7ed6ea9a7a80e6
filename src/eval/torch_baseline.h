// PyTorch eager and torch.compile of an operator's `torch` expression (its
// YAML), timed beside the timed baseline by src/eval/torch_baseline.py. The
// runner is trusted code but runs in its own process, with a scrubbed
// environment (no API keys), in a private temporary directory; it gets the
// shape's actual inputs and hands its outputs back, and the evaluator checks
// them against the reference before any time is reported: a wrong
// expression is reported ("wrong: ..."), never timed.
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "eval/verdict.h"
#include "spec/operator_spec.h"

namespace kevolve::eval {

struct torch_settings {
  std::filesystem::path python;  // the interpreter (python_executable())
  std::string device = "cpu";    // cuda | cpu
  bool compile = false;          // also torch.compile
  int threads = 1;
  double rotation_bytes = 0;     // timed calls rotate over copies of the inputs larger than this
  int max_sets = 32;
  double budget_seconds = 0.4;   // per mode
  int min_runs = 10;
  std::chrono::milliseconds eager_timeout{120000};   // start-up, warm-up and timing
  std::chrono::milliseconds compile_timeout{600000};  // the same, plus compiling
};

// "" when `python` imports torch (and, for device "cuda", torch sees a GPU),
// else why not. Probed once per interpreter and device in this process.
std::string probe_torch(const std::filesystem::path& python, const std::string& device, bool gpu = false);
// The torch version a probe of `python` found ("2.11.0+cu130"); "" before one.
std::string torch_version(const std::filesystem::path& python);

// The environment of the runner: what PyTorch needs to find its libraries
// and tools (the interpreter's directory first on PATH), the GPU this
// process was given and its compile caches; nothing else.
std::vector<std::string> torch_environment(const std::filesystem::path& python, const std::filesystem::path& dir,
                                           int threads);

// "" when the outputs (one pointer per operator output, native dtype) match
// the reference, else the first mismatch.
using output_checker = std::function<std::string(const std::vector<const char*>& outputs)>;

struct torch_times {
  side_baseline eager, compile;
};

// Runs the expression at one shape on `inputs` (one pointer per operator
// input, native dtype). Failures are notes in the result, never errors.
torch_times measure_torch(const torch_settings& s, const spec::operator_spec& op, const spec::problem_instance& inst,
                          const std::vector<const char*>& inputs, const output_checker& check);

}  // namespace kevolve::eval
