// Synthesizers write a child candidate from its parent and context: the
// builtin one (templates + parameter search + diagnostic rules, offline) and,
// later, LLM clients. They only write code; the evaluator judges it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "eval/status.h"
#include "search/tree.h"
#include "spec/operator_spec.h"

namespace kevolve::synth {

// An earlier candidate the synthesizer is shown, with its verdict and the
// runtime diagnostics that steer the next step.
struct context_item {
  search::node_id id = search::kNoNode;
  std::string code;
  eval::status result = eval::status::skipped;
  double fitness = 0.0;
  std::string reason;               // why it failed, if it did
  std::string compile_diagnostics;  // compiler output
  std::string bottleneck;           // memory-bound, compute-bound, latency-bound
  double roofline_fraction = 0.0;   // worst timed shape
};

struct synthesis_request {
  const spec::operator_spec* op = nullptr;
  const spec::variant* variant = nullptr;
  std::string backend = "cpu";
  search::memory_mode mode = search::memory_mode::reset;
  std::vector<context_item> context;  // the parent first (empty on reset)
  uint64_t seed = 0;                  // per child: the same seed, the same code
};

struct synthesis_result {
  bool ok = false;
  std::string code;
  std::string origin;   // "builtin:<template>"
  std::string summary;  // what was chosen or changed, one line
  std::string error;    // when !ok: why nothing could be written
};

class synthesizer {
 public:
  virtual ~synthesizer() = default;
  virtual std::string name() const = 0;
  // Whether it can write kernels for this operator on this backend.
  virtual bool supports(const spec::operator_spec& op, const std::string& backend) const = 0;
  virtual synthesis_result write(const synthesis_request& request) = 0;
};

}  // namespace kevolve::synth
