// A task as flat tables: the rows of the store's `nodes` and `measurements`
// datasets, the `context` list, and the order in which strings go into the
// `text` blob (layout in hdf5_store.h). No HDF5 here: hdf5_store.cpp only
// moves these tables to and from the file.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "store/sweep_record.h"

namespace kevolve::store {

struct node_row {
  int64_t id, parent;
  int32_t depth, mode, state, status;
  double fitness, created_s, finished_s;
  int64_t visits;
  double value_sum;
  int32_t rank;
  uint64_t code_offset, code_length, origin_offset, origin_length, reason_offset, reason_length;
  uint64_t context_offset, context_length;
};

struct measurement_row {
  int64_t node;
  int32_t holdout;
  double max_abs_error, candidate_median_s, candidate_p10_s, candidate_p90_s, baseline_median_s, speedup,
      achieved_gbs, achieved_gflops, roofline_fraction;
  double torch_eager_median_s, torch_compile_median_s;  // schema 4
  uint64_t shape_offset, shape_length, status_offset, status_length, bottleneck_offset, bottleneck_length;
  uint64_t profile_offset, profile_length, metrics_offset, metrics_length;  // schema 5 (older stores: all 0)
  double attainable_fraction;                                               // schema 6 (older stores: 0)
  uint64_t bound_offset, bound_length;                                      // schema 6 (older stores: 0)
};

struct llm_row {
  int64_t node;
  int32_t purpose;  // schema 4: 0 kernel, 1 skill_note (older stores: 0)
  int32_t attempts, tokens_estimated;
  int64_t prompt_tokens, completion_tokens;
  double latency_s, total_s, cost, prompt_ms;
  uint64_t endpoint_offset, endpoint_length, model_offset, model_length, status_offset, status_length, error_offset,
      error_length, prompt_offset, prompt_length, reply_offset, reply_length, documents_offset, documents_length;
};

// The `llm` table and its `llm_text` blob (schema 3): strings per row in the
// order endpoint, model, status, error, prompt, reply, documents.
uint64_t llm_text_bytes(const task_record& t);
std::vector<llm_row> flatten_llm(const task_record& t, const std::function<uint64_t(std::string_view)>& append_text);
// "" or what is wrong ("llm: row 3 prompt: byte range ... past the end ...", "llm: row 2 names node 9, ...").
std::string unflatten_llm(const std::vector<llm_row>& rows, uint64_t text_size,
                          const std::function<std::string(uint64_t, uint64_t)>& read_text, task_record& t);

// llm_exchange::purpose as stored (`purpose_values` of the llm table).
constexpr const char* kLlmPurposes[] = {"kernel", "skill_note"};

struct skill_row {
  int64_t node, parent, exchange;
  int32_t accepted;
  double parent_fitness, child_fitness;
  uint64_t note_offset, note_length, reason_offset, reason_length, hardware_offset, hardware_length, evidence_offset,
      evidence_length;
};

// The `skills` table and its `skills_text` blob (schema 4): strings per row
// in the order note, reason, hardware, evidence.
uint64_t skills_text_bytes(const task_record& t);
std::vector<skill_row> flatten_skills(const task_record& t, const std::function<uint64_t(std::string_view)>& append_text);
// "" or what is wrong ("skills: row 1 note: byte range ...").
std::string unflatten_skills(const std::vector<skill_row>& rows, uint64_t text_size,
                             const std::function<std::string(uint64_t, uint64_t)>& read_text, task_record& t);

struct task_tables {
  std::vector<node_row> nodes;
  std::vector<int64_t> context;
  std::vector<measurement_row> measurements;
};

// A measurement's metrics as stored in `text`: a JSON object of numbers, ""
// when there are none. parse_metrics returns "" or what is wrong.
std::string metrics_text(const std::map<std::string, double>& metrics);
std::string parse_metrics(const std::string& text, std::map<std::string, double>& out);

// Bytes of all the task's strings: the size of its `text` blob.
uint64_t text_bytes(const task_record& t);

// The task's tables. Every string is handed to `append_text`, which stores it
// and returns its offset in the blob: per node code, origin, reason, then per
// measurement shape, status, bottleneck, profile, metrics (metrics_text).
task_tables flatten(const task_record& t, const std::function<uint64_t(std::string_view)>& append_text);

// Fills t.search.nodes (children linked from the parents) and t.measurements
// from the tables. `read_text(offset, length)` returns a range of the blob of
// `text_size` bytes; ranges are checked first. Returns "" or what is wrong,
// naming the row ("nodes: node 5 code: byte range [10, +20) is past the end
// of text (25 bytes)"). Scalars of the task (names, RNG, counters) are left
// to the caller; so is check_task.
std::string unflatten(const task_tables& tables, uint64_t text_size,
                      const std::function<std::string(uint64_t, uint64_t)>& read_text, task_record& t);

}  // namespace kevolve::store
