// Synthesizers write a child candidate from its parent and context: the
// builtin one (templates + parameter search + diagnostic rules, offline) and,
// later, LLM clients. They only write code; the evaluator judges it.
#pragma once

#include <cstdint>
#include <map>
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
  std::map<std::string, double> metrics{};  // hardware counters of the worst profiled timed shape by short
                                          // name (dram_pct, occupancy_pct, ...); empty: not profiled
};

struct synthesis_request {
  const spec::operator_spec* op = nullptr;
  const spec::variant* variant = nullptr;
  std::string backend = "cpu";
  search::memory_mode mode = search::memory_mode::reset;
  search::node_id parent = search::kNoNode;  // the node the child grows from (kRoot: none)
  int sibling_index = -1;  // children the parent had before this one (-1: unknown)
  std::vector<context_item> context;  // the parent first (empty on reset)
  uint64_t seed = 0;                  // per child: the same seed, the same code
};

// One request an LLM synthesizer made for the child (stored with the node).
struct llm_call {
  std::string purpose = "kernel";  // kernel | skill_note
  std::string endpoint, model;
  std::string status;     // ok | unusable | failed | over_budget | unavailable
  std::string error;      // why the request failed or the reply was unusable
  std::string prompt;     // the messages sent: a JSON array of {role, content}
  std::string reply;
  std::string documents;  // knowledge documents in the prompt, one path per line
  int attempts = 0;
  long long prompt_tokens = 0, completion_tokens = 0;
  bool tokens_estimated = false;
  double latency_s = 0, total_s = 0, cost = 0, prompt_ms = 0;
};

struct synthesis_result {
  bool ok = false;
  std::string code;
  std::string origin;   // "builtin:<template>", "llm:<model>"
  std::string summary;  // what was chosen or changed, one line
  std::string error;    // when !ok: why nothing could be written
  std::vector<llm_call> calls;  // LLM requests made for this child, kept even when !ok
};

// A child improved on its task's best: what a synthesizer is shown to write
// a skill note about the decisive change from the parent.
struct note_request {
  std::string task;  // "<operator>/<variant>/<backend>"
  const spec::operator_spec* op = nullptr;
  const spec::variant* variant = nullptr;
  std::string backend, hardware;
  context_item parent, child;  // code and verdict of each
  std::string parent_origin, child_origin;
  std::string measurements;  // per shape, parent then child: one line each
};

struct note_result {
  // "": not asked (no endpoint, a budget spent, notes off); failed: no
  // reply; accepted; refused (empty, or over the length limit).
  std::string status;
  std::string note;    // accepted: the note
  std::string reason;  // why it was refused or not asked
  std::vector<llm_call> calls;
};

class synthesizer {
 public:
  virtual ~synthesizer() = default;
  virtual std::string name() const = 0;
  // Whether it can write kernels for this operator on this backend.
  virtual bool supports(const spec::operator_spec& op, const std::string& backend) const = 0;
  virtual synthesis_result write(const synthesis_request& request) = 0;
  // A short note about an improvement; only LLMs write them (the builtin
  // synthesizer's skills are its template priors, distilled on promote).
  virtual note_result write_note(const note_request&) { return {}; }
};

}  // namespace kevolve::synth
