// Everything a sweep keeps: what is written to the store at a checkpoint and
// read back on --resume. Plain data; src/store/hdf5_store.* is the only code
// that knows HDF5.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "search/engine.h"

namespace kevolve::store {

// 2: nodes gain `rank`, the store gains the `ranks` table. Version 1 stores
// are still read (ranks unknown: -1, no rank table).
// 3: tasks gain `llm` and `llm_text` (the LLM exchanges of their nodes).
// Versions 1 and 2 are still read (no exchanges).
// 4: measurements gain torch_eager_median_s and torch_compile_median_s (the
// PyTorch baselines); llm rows gain `purpose` (kernel or skill_note); tasks
// gain `skills` and `skills_text` (the notes the LLM wrote about improvements,
// with evidence). Versions 1 to 3 are still read (no PyTorch times: 0; every
// exchange a kernel request; no skills).
// 5: measurements gain `profile` (the backend's one-line profile summary) and
// `metrics` (hardware counters by short name, e.g. Nsight Compute's), both in
// the task's `text`. Versions 1 to 4 are still read (no profile, no metrics).
// 6: measurements gain `attainable_fraction` (the attainable ceiling over the
// candidate's median, eval/backends/ceiling.h) and `bound` (what bounds that
// ceiling, in `text`). Versions 1 to 5 are still read (0 and "": none).
constexpr int kSchemaVersion = 6;
constexpr int kOldestReadableSchema = 1;

// One shape of one evaluated node (from eval::shape_verdict).
struct shape_measurement {
  int64_t node = 0;
  std::string shape;
  bool holdout = false;
  std::string status;  // eval::to_string(status)
  double max_abs_error = 0.0;
  double candidate_median_s = 0.0;
  double candidate_p10_s = 0.0;
  double candidate_p90_s = 0.0;
  double baseline_median_s = 0.0;
  double speedup = 0.0;
  double achieved_gbs = 0.0;
  double achieved_gflops = 0.0;
  double roofline_fraction = 0.0;
  std::string bottleneck;
  double torch_eager_median_s = 0.0;    // PyTorch eager of the operator's `torch` expression; 0: not measured
  double torch_compile_median_s = 0.0;  // the same under torch.compile
  std::string profile{};  // the backend's one-line profile summary (eval::shape_verdict::profile); "": not profiled
  std::map<std::string, double> metrics{};  // hardware counters by short name (dram_pct, occupancy_pct, ...); empty: none
  double attainable_fraction = 0.0;  // schema 6: the attainable ceiling / candidate median (eval::shape_verdict); 0: none
  std::string bound{};               // schema 6: what bounds the ceiling ("memory (SRAM)", "DPE split", ...); "": none
};

// One request of the llm synthesizer for one node: what was sent, what came
// back, what it cost. API keys are never part of it.
struct llm_exchange {
  int64_t node = 0;
  std::string purpose = "kernel";  // kernel (the node's code) | skill_note (a note about the node's improvement)
  std::string endpoint;   // the endpoint's name ("<model>@<host>" by default)
  std::string model;
  std::string status;     // ok | unusable | failed | over_budget | unavailable
  std::string error;      // why the request failed or the reply was unusable
  std::string prompt;     // the messages sent: a JSON array of {role, content}
  std::string reply;      // the reply's text
  std::string documents;  // knowledge documents in the prompt, one path per line
  int32_t attempts = 0;   // HTTP requests made (retries included)
  int64_t prompt_tokens = 0;
  int64_t completion_tokens = 0;
  int32_t tokens_estimated = 0;  // 1: the server sent no usage (4 characters a token)
  double latency_s = 0;   // the successful request
  double total_s = 0;     // the whole call: retries, backoff, waits for a slot
  double cost = 0;        // from the endpoint's prices
  double prompt_ms = 0;   // time to assemble the prompt
};

// A skill the LLM wrote when `node` improved on the task's best: a short
// note about the decisive change from its parent, checked for length, with
// the evidence it rests on. `kevolve kb promote` and `--seed-from` turn the
// accepted ones into skill documents.
struct skill_note {
  int64_t node = 0;       // the improved child
  int64_t parent = 0;     // the node it was written from
  int64_t exchange = -1;  // the row of the task's `llm` that asked for the note
  bool accepted = false;  // within the length limit, not empty
  double parent_fitness = 0, child_fitness = 0;
  std::string note;       // the note (accepted only)
  std::string reason;     // why it was refused (refused only)
  std::string hardware;   // the hardware profile, e.g. x86
  std::string evidence;   // JSON: operator, variant, class, backend, hardware, model, and per node
                          // (parent, child) its id, origin, status, fitness and per-shape measurements
};

// One task: one operator variant on one backend, with its search tree.
struct task_record {
  std::string id;  // "<operator>/<variant>/<backend>"
  std::string op;
  std::string variant;
  std::string backend;
  std::string baseline;       // the baseline's display name
  // What fitness (and the summary's best speedup) is a speedup over:
  // "× PyTorch (...)" or "× baseline (...)"; stores before it: the baseline.
  std::string fitness_over;
  std::string stop_reason;    // "" while running
  double seconds_spent = 0.0;  // wall time of this task's search so far
  search::search_engine::snapshot search;  // nodes (with code), RNG, counters
  std::vector<shape_measurement> measurements;
  std::vector<llm_exchange> llm;  // in the order the exchanges happened
  std::vector<skill_note> skills;  // in the order they were written
};

// What one rank did in one session (a run or a resumed run) of the sweep.
struct rank_record {
  int32_t session = 0;  // 0 for the first run, +1 per --resume
  int32_t rank = 0;
  std::string host;
  std::string backend;
  std::string state = "active";  // active | suspect | retired | finished
  int64_t evaluations = 0;
  std::map<std::string, int64_t> by_status;  // verdict statuses, and "error"
  int64_t deadline_misses = 0;
  double busy_seconds = 0.0;  // evaluating
  double uptime_seconds = 0.0;
  int32_t queue_depth = 0;  // requests waiting on the rank at the last report
  double cpu_seconds = 0.0;  // of the rank's own process
};

struct sweep_record {
  int schema_version = kSchemaVersion;
  std::string kevolve_version;
  std::string config_yaml;  // the sweep's config, verbatim
  std::string config_hash;  // of what decides compatibility on resume
  std::string created_at;   // ISO 8601 UTC
  std::vector<task_record> tasks;
  std::vector<rank_record> ranks;  // every session's evaluator ranks
};

}  // namespace kevolve::store
