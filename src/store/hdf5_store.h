// The sweep's store: one HDF5 file holding a store::sweep_record (config,
// tasks, search trees with code, measurements, search state). The only code
// in kevolve that includes HDF5 headers is hdf5_store.cpp.
//
// Layout, schema_version 6 (also in src/store/README.md):
//
//   /                         attributes:
//     schema_version   int32          6; 5 is read too (no attainable ceiling),
//                                     4 (no profiles, no metrics either),
//                                     3 (no PyTorch times, no llm purpose, no
//                                     skills either), 2 (no llm tables), and 1
//                                     (no llm tables, no node ranks, no /ranks)
//     kevolve_version  string         (all strings: scalar, variable-length UTF-8)
//     config_yaml      string         the sweep's config, verbatim
//     config_hash      string
//     created_at       string         ISO 8601 UTC
//     task_count       int64          number of groups under /tasks
//   /tasks/<i>                group per task, i = 0 .. task_count-1, attributes:
//     id, operator, variant, backend, baseline, stop_reason   string
//     seconds_spent    double
//     rng_state        uint64[4]      the search RNG (xoshiro256**) state
//     evaluations, since_improvement  int64
//     best_fitness     double
//   /tasks/<i>/nodes          compound[n], row k is node k (row 0: the root):
//     id, parent int64; depth, mode, state, status int32; fitness, created_s,
//     finished_s double; visits int64; value_sum double; rank int32 (the MPI
//     rank that evaluated it, -1 unknown);
//     code_offset, code_length, origin_offset, origin_length,
//     reason_offset, reason_length        uint64, byte ranges into `text`
//     context_offset, context_length      uint64, element range into `context`
//     mode:   0 inherit, 1 compare_siblings, 2 merge, 3 reset
//     state:  0 pending, 1 evaluated
//     status: eval::status, 0 ok, 1 compile_failed, 2 wrong_result,
//             3 runtime_failed, 4 timeout, 5 crashed, 6 suspicious, 7 skipped
//     (the same mappings are attributes mode_values/state_values/status_values
//     of the dataset). Children are not stored: they are the nodes whose parent
//     is k, in increasing id order, which is the order the tree adds them.
//   /tasks/<i>/text           uint8[bytes]: every string of the task back to
//     back, without separators: per node code, origin, reason; then per
//     measurement shape, status, bottleneck, profile, metrics, bound. Decode
//     text[off:off+len] as UTF-8.
//   /tasks/<i>/context        int64[m]: all nodes' context lists back to back.
//   /tasks/<i>/measurements   compound[r], one row per shape_measurement:
//     node int64; holdout int32 (0/1); max_abs_error, candidate_median_s,
//     candidate_p10_s, candidate_p90_s, baseline_median_s, speedup,
//     achieved_gbs, achieved_gflops, roofline_fraction double;
//     torch_eager_median_s, torch_compile_median_s double (schema 4; 0: not
//     measured);
//     shape_offset, shape_length, status_offset, status_length,
//     bottleneck_offset, bottleneck_length uint64 (byte ranges into `text`);
//     profile_offset, profile_length, metrics_offset, metrics_length uint64
//     (schema 5, byte ranges into `text`): the backend's one-line profile and
//     the hardware counters as a JSON object {"dram_pct": 71.5, ...}; length
//     0: not profiled.
//     attainable_fraction double, bound_offset, bound_length uint64 (schema 6):
//     the attainable ceiling over the candidate's median (0: none) and what
//     bounds it (a byte range into `text`; length 0: none).
//   /tasks/<i>/llm            compound[e], one row per LLM request of the llm
//     synthesizer, in the order they happened (schema 3): node int64;
//     attempts, tokens_estimated int32; prompt_tokens, completion_tokens
//     int64; latency_s, total_s, cost, prompt_ms double; endpoint_*, model_*,
//     status_*, error_*, prompt_*, reply_*, documents_* `_offset`/`_length`
//     uint64 (byte ranges into `llm_text`). status: ok, unusable, failed.
//     prompt: the messages sent, a JSON array of {role, content}. purpose
//     int32 (schema 4): 0 kernel (the node's code), 1 skill_note.
//   /tasks/<i>/llm_text       uint8[bytes]: the llm rows' strings back to back
//     (per row: endpoint, model, status, error, prompt, reply, documents);
//     deflated like `text` when store_options::text_deflate > 0.
//   /tasks/<i>/skills         compound[s], one row per note the LLM wrote about
//     an improvement (schema 4): node, parent, exchange (row of `llm`, -1
//     none) int64; accepted int32; parent_fitness, child_fitness double;
//     note_*, reason_*, hardware_*, evidence_* `_offset`/`_length` uint64
//     (byte ranges into `skills_text`; evidence is JSON).
//   /tasks/<i>/skills_text    uint8[bytes]: the skills rows' strings back to back.
//   /ranks                    compound[k], one row per evaluator rank and session
//     (0 = the first run, +1 per --resume): session, rank int32; host string[64],
//     backend string[16], state string[16] (active, suspect, retired, finished);
//     evaluations, deadline_misses, queue_depth int64; busy_seconds,
//     uptime_seconds, cpu_seconds double; then one int64 column per verdict
//     status (ok ... skipped) and `error` (operational failures).
//
// Compound datasets are stored packed and contiguous. `text` is contiguous
// unless store_options::text_deflate > 0 (then chunked, 1 MiB, deflate).
// Empty datasets have shape (0,).
//
// Checkpoints are atomic: write_store writes "<path>.tmp-<pid>", closes and
// fsyncs it, renames it over `path` and fsyncs the directory, so `path` is
// always the old or the new complete file. A writer killed mid-way leaves only
// its "<path>.tmp-<pid>" behind. Calls must come from one thread at a time
// (the checkpoint actor): the HDF5 C++ API is not thread-safe.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

#include "common/error.h"
#include "store/sweep_record.h"

namespace kevolve::store {

struct store_options {
  // Deflate level (1-9) for the `text` dataset, 0 for none. Level 1 saves
  // about 3/4 of the file on source code but costs write time; see
  // bench/store_checkpoint.cpp for the figures.
  int text_deflate = 0;
};

// Writes `r` atomically to `path` (the parent directory is created). Errors:
// invalid_input when the record is inconsistent (names the task and node),
// io_error when HDF5 or the file system fails (names the path); the
// temporary file is removed on any error.
expected<void> write_store(const std::filesystem::path& path, const sweep_record& r, const store_options& options = {});

// Reads a store written by write_store. Errors: not_found when `path` does not
// exist; invalid_input when it is not an HDF5 file, is corrupt or truncated,
// lacks a group, dataset, attribute or field (named), has another
// schema_version (found and expected), or holds inconsistent data (offsets
// past the end, bad parents): the message starts with the path.
expected<sweep_record> read_store(const std::filesystem::path& path);

// In-place edits of a store, for tests and repair tools only: a sweep never
// calls them (they are not atomic). `object` is an HDF5 path such as
// "/tasks/0/text"; "/" is the root group.
expected<void> store_remove_object(const std::filesystem::path& path, const std::string& object);
expected<void> store_remove_attribute(const std::filesystem::path& path, const std::string& object,
                                      const std::string& name);
expected<void> store_set_int_attribute(const std::filesystem::path& path, const std::string& object,
                                       const std::string& name, int64_t value);

}  // namespace kevolve::store
