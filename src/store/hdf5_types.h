// The compound types of the store's tables (rows in store_rows.h) and the
// fixed-size strings of the `ranks` table. Only hdf5_store.cpp includes this.
#pragma once

#include <H5Cpp.h>

#include <algorithm>
#include <cstring>
#include <string>

#include "store/store_rows.h"

namespace kevolve::store::hdf5_types {

#define KEVOLVE_MEMBER(type, row, field, h5) type.insertMember(#field, HOFFSET(row, field), H5::PredType::h5)

// Columns of the `ranks` table counting verdicts by status (and "error":
// evaluations that failed for operational reasons).
constexpr int kRankStatusColumns = 9;
constexpr const char* kRankStatusNames[kRankStatusColumns] = {
    "ok", "compile_failed", "wrong_result", "runtime_failed", "timeout", "crashed", "suspicious", "skipped", "error"};

// `with_rank`: schema 2 and later.
inline H5::CompType node_type(bool with_rank = true) {
  H5::CompType t(sizeof(node_row));
  if (with_rank) KEVOLVE_MEMBER(t, node_row, rank, NATIVE_INT32);
  KEVOLVE_MEMBER(t, node_row, id, NATIVE_INT64);
  KEVOLVE_MEMBER(t, node_row, parent, NATIVE_INT64);
  KEVOLVE_MEMBER(t, node_row, depth, NATIVE_INT32);
  KEVOLVE_MEMBER(t, node_row, mode, NATIVE_INT32);
  KEVOLVE_MEMBER(t, node_row, state, NATIVE_INT32);
  KEVOLVE_MEMBER(t, node_row, status, NATIVE_INT32);
  KEVOLVE_MEMBER(t, node_row, fitness, NATIVE_DOUBLE);
  KEVOLVE_MEMBER(t, node_row, created_s, NATIVE_DOUBLE);
  KEVOLVE_MEMBER(t, node_row, finished_s, NATIVE_DOUBLE);
  KEVOLVE_MEMBER(t, node_row, visits, NATIVE_INT64);
  KEVOLVE_MEMBER(t, node_row, value_sum, NATIVE_DOUBLE);
  KEVOLVE_MEMBER(t, node_row, code_offset, NATIVE_UINT64);
  KEVOLVE_MEMBER(t, node_row, code_length, NATIVE_UINT64);
  KEVOLVE_MEMBER(t, node_row, origin_offset, NATIVE_UINT64);
  KEVOLVE_MEMBER(t, node_row, origin_length, NATIVE_UINT64);
  KEVOLVE_MEMBER(t, node_row, reason_offset, NATIVE_UINT64);
  KEVOLVE_MEMBER(t, node_row, reason_length, NATIVE_UINT64);
  KEVOLVE_MEMBER(t, node_row, context_offset, NATIVE_UINT64);
  KEVOLVE_MEMBER(t, node_row, context_length, NATIVE_UINT64);
  return t;
}

// `with_torch`: schema 4 and later; `with_profile` (profile and metrics): 5
// and later; `with_ceiling` (attainable_fraction, bound): 6 and later.
inline H5::CompType measurement_type(bool with_torch = true, bool with_profile = true, bool with_ceiling = true) {
  H5::CompType t(sizeof(measurement_row));
  if (with_torch) {
    KEVOLVE_MEMBER(t, measurement_row, torch_eager_median_s, NATIVE_DOUBLE);
    KEVOLVE_MEMBER(t, measurement_row, torch_compile_median_s, NATIVE_DOUBLE);
  }
  KEVOLVE_MEMBER(t, measurement_row, node, NATIVE_INT64);
  KEVOLVE_MEMBER(t, measurement_row, holdout, NATIVE_INT32);
  KEVOLVE_MEMBER(t, measurement_row, max_abs_error, NATIVE_DOUBLE);
  KEVOLVE_MEMBER(t, measurement_row, candidate_median_s, NATIVE_DOUBLE);
  KEVOLVE_MEMBER(t, measurement_row, candidate_p10_s, NATIVE_DOUBLE);
  KEVOLVE_MEMBER(t, measurement_row, candidate_p90_s, NATIVE_DOUBLE);
  KEVOLVE_MEMBER(t, measurement_row, baseline_median_s, NATIVE_DOUBLE);
  KEVOLVE_MEMBER(t, measurement_row, speedup, NATIVE_DOUBLE);
  KEVOLVE_MEMBER(t, measurement_row, achieved_gbs, NATIVE_DOUBLE);
  KEVOLVE_MEMBER(t, measurement_row, achieved_gflops, NATIVE_DOUBLE);
  KEVOLVE_MEMBER(t, measurement_row, roofline_fraction, NATIVE_DOUBLE);
  KEVOLVE_MEMBER(t, measurement_row, shape_offset, NATIVE_UINT64);
  KEVOLVE_MEMBER(t, measurement_row, shape_length, NATIVE_UINT64);
  KEVOLVE_MEMBER(t, measurement_row, status_offset, NATIVE_UINT64);
  KEVOLVE_MEMBER(t, measurement_row, status_length, NATIVE_UINT64);
  KEVOLVE_MEMBER(t, measurement_row, bottleneck_offset, NATIVE_UINT64);
  KEVOLVE_MEMBER(t, measurement_row, bottleneck_length, NATIVE_UINT64);
  if (with_profile) {
    KEVOLVE_MEMBER(t, measurement_row, profile_offset, NATIVE_UINT64);
    KEVOLVE_MEMBER(t, measurement_row, profile_length, NATIVE_UINT64);
    KEVOLVE_MEMBER(t, measurement_row, metrics_offset, NATIVE_UINT64);
    KEVOLVE_MEMBER(t, measurement_row, metrics_length, NATIVE_UINT64);
  }
  if (with_ceiling) {
    KEVOLVE_MEMBER(t, measurement_row, attainable_fraction, NATIVE_DOUBLE);
    KEVOLVE_MEMBER(t, measurement_row, bound_offset, NATIVE_UINT64);
    KEVOLVE_MEMBER(t, measurement_row, bound_length, NATIVE_UINT64);
  }
  return t;
}

// `with_purpose`: schema 4 and later.
inline H5::CompType llm_type(bool with_purpose = true) {
  H5::CompType t(sizeof(llm_row));
  KEVOLVE_MEMBER(t, llm_row, node, NATIVE_INT64);
  if (with_purpose) KEVOLVE_MEMBER(t, llm_row, purpose, NATIVE_INT32);
  KEVOLVE_MEMBER(t, llm_row, attempts, NATIVE_INT32);
  KEVOLVE_MEMBER(t, llm_row, tokens_estimated, NATIVE_INT32);
  KEVOLVE_MEMBER(t, llm_row, prompt_tokens, NATIVE_INT64);
  KEVOLVE_MEMBER(t, llm_row, completion_tokens, NATIVE_INT64);
  KEVOLVE_MEMBER(t, llm_row, latency_s, NATIVE_DOUBLE);
  KEVOLVE_MEMBER(t, llm_row, total_s, NATIVE_DOUBLE);
  KEVOLVE_MEMBER(t, llm_row, cost, NATIVE_DOUBLE);
  KEVOLVE_MEMBER(t, llm_row, prompt_ms, NATIVE_DOUBLE);
  KEVOLVE_MEMBER(t, llm_row, endpoint_offset, NATIVE_UINT64);
  KEVOLVE_MEMBER(t, llm_row, endpoint_length, NATIVE_UINT64);
  KEVOLVE_MEMBER(t, llm_row, model_offset, NATIVE_UINT64);
  KEVOLVE_MEMBER(t, llm_row, model_length, NATIVE_UINT64);
  KEVOLVE_MEMBER(t, llm_row, status_offset, NATIVE_UINT64);
  KEVOLVE_MEMBER(t, llm_row, status_length, NATIVE_UINT64);
  KEVOLVE_MEMBER(t, llm_row, error_offset, NATIVE_UINT64);
  KEVOLVE_MEMBER(t, llm_row, error_length, NATIVE_UINT64);
  KEVOLVE_MEMBER(t, llm_row, prompt_offset, NATIVE_UINT64);
  KEVOLVE_MEMBER(t, llm_row, prompt_length, NATIVE_UINT64);
  KEVOLVE_MEMBER(t, llm_row, reply_offset, NATIVE_UINT64);
  KEVOLVE_MEMBER(t, llm_row, reply_length, NATIVE_UINT64);
  KEVOLVE_MEMBER(t, llm_row, documents_offset, NATIVE_UINT64);
  KEVOLVE_MEMBER(t, llm_row, documents_length, NATIVE_UINT64);
  return t;
}

inline H5::CompType skill_type() {
  H5::CompType t(sizeof(skill_row));
  KEVOLVE_MEMBER(t, skill_row, node, NATIVE_INT64);
  KEVOLVE_MEMBER(t, skill_row, parent, NATIVE_INT64);
  KEVOLVE_MEMBER(t, skill_row, exchange, NATIVE_INT64);
  KEVOLVE_MEMBER(t, skill_row, accepted, NATIVE_INT32);
  KEVOLVE_MEMBER(t, skill_row, parent_fitness, NATIVE_DOUBLE);
  KEVOLVE_MEMBER(t, skill_row, child_fitness, NATIVE_DOUBLE);
  KEVOLVE_MEMBER(t, skill_row, note_offset, NATIVE_UINT64);
  KEVOLVE_MEMBER(t, skill_row, note_length, NATIVE_UINT64);
  KEVOLVE_MEMBER(t, skill_row, reason_offset, NATIVE_UINT64);
  KEVOLVE_MEMBER(t, skill_row, reason_length, NATIVE_UINT64);
  KEVOLVE_MEMBER(t, skill_row, hardware_offset, NATIVE_UINT64);
  KEVOLVE_MEMBER(t, skill_row, hardware_length, NATIVE_UINT64);
  KEVOLVE_MEMBER(t, skill_row, evidence_offset, NATIVE_UINT64);
  KEVOLVE_MEMBER(t, skill_row, evidence_length, NATIVE_UINT64);
  return t;
}

// The `ranks` table: one row per evaluator rank and session.
struct rank_row {
  int32_t session, rank;
  char host[64], backend[16], state[16];
  int64_t evaluations, deadline_misses, queue_depth;
  double busy_seconds, uptime_seconds, cpu_seconds;
  int64_t by_status[kRankStatusColumns];
};

inline H5::CompType rank_type() {
  H5::CompType t(sizeof(rank_row));
  KEVOLVE_MEMBER(t, rank_row, session, NATIVE_INT32);
  KEVOLVE_MEMBER(t, rank_row, rank, NATIVE_INT32);
  t.insertMember("host", HOFFSET(rank_row, host), H5::StrType(H5::PredType::C_S1, sizeof(rank_row::host)));
  t.insertMember("backend", HOFFSET(rank_row, backend), H5::StrType(H5::PredType::C_S1, sizeof(rank_row::backend)));
  t.insertMember("state", HOFFSET(rank_row, state), H5::StrType(H5::PredType::C_S1, sizeof(rank_row::state)));
  KEVOLVE_MEMBER(t, rank_row, evaluations, NATIVE_INT64);
  KEVOLVE_MEMBER(t, rank_row, deadline_misses, NATIVE_INT64);
  KEVOLVE_MEMBER(t, rank_row, queue_depth, NATIVE_INT64);
  KEVOLVE_MEMBER(t, rank_row, busy_seconds, NATIVE_DOUBLE);
  KEVOLVE_MEMBER(t, rank_row, uptime_seconds, NATIVE_DOUBLE);
  KEVOLVE_MEMBER(t, rank_row, cpu_seconds, NATIVE_DOUBLE);
  for (int i = 0; i < kRankStatusColumns; ++i)
    t.insertMember(kRankStatusNames[i], HOFFSET(rank_row, by_status) + sizeof(int64_t) * size_t(i), H5::PredType::NATIVE_INT64);
  return t;
}

template <size_t N>
inline void copy_fixed(char (&out)[N], const std::string& s) {
  std::memset(out, 0, N);
  std::memcpy(out, s.data(), std::min(N - 1, s.size()));
}

template <size_t N>
std::string from_fixed(const char (&in)[N]) {
  return std::string(in, strnlen(in, N));
}

#undef KEVOLVE_MEMBER

}  // namespace kevolve::store::hdf5_types
