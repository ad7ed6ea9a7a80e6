// Every message type the actors exchange, in one CAF type-ID block, with the
// inspect() functions CAF uses for local messages and the MPI codec alike.
// The plain structs live with their components (src/sweep/work.h,
// src/store/sweep_record.h); only their wire form is defined here.
#pragma once

#include <caf/allowed_unsafe_message_type.hpp>
#include <caf/atom.hpp>
#include <caf/meta/type_name.hpp>
#include <caf/type_id.hpp>

#include "store/sweep_record.h"
#include "sweep/scheduler.h"
#include "sweep/work.h"

namespace kevolve::actors {

// Coordinator -> evaluator rank, in two steps: first "stop and say bye"
// (final_word false), then, once every rank said bye or a timeout passed,
// the final word: `finalize` when every rank answered, so MPI can be
// finalized together (Open MPI's finalize waits for every rank, a dead one
// too).
struct shutdown_msg {
  bool final_word = true;
  bool finalize = true;
};

// Evaluator rank -> coordinator: stopped, alive, waiting for the final word.
struct rank_bye {
  int32_t rank = 0;
};

// Evaluator rank -> coordinator: this rank received a signal.
struct signal_notice {
  int32_t rank = 0;
  int32_t signo = 0;
};

// The bridge could not read a message from `source` (wrong version, garbage).
struct codec_failure {
  int32_t source = 0;
  std::string message;
};

// Synthesizer pool: a job and its result (local to rank 0, never serialized).
struct synth_request {
  sweep::synth_job job;
};
struct synth_reply {
  sweep::synth_job job;
  synth::synthesis_result result;
  synth::note_result note;  // when job.note
};

// Store actor -> coordinator: a checkpoint finished ("" or the error).
struct checkpoint_done {
  uint64_t sequence = 0;
  std::string error;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, shutdown_msg& x) {
  return f(caf::meta::type_name("shutdown_msg"), x.final_word, x.finalize);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, rank_bye& x) {
  return f(caf::meta::type_name("rank_bye"), x.rank);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, signal_notice& x) {
  return f(caf::meta::type_name("signal_notice"), x.rank, x.signo);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, codec_failure& x) {
  return f(caf::meta::type_name("codec_failure"), x.source, x.message);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, checkpoint_done& x) {
  return f(caf::meta::type_name("checkpoint_done"), x.sequence, x.error);
}

}  // namespace kevolve::actors

namespace kevolve::store {
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, shape_measurement& x) {
  return f(caf::meta::type_name("shape_measurement"), x.node, x.shape, x.holdout, x.status, x.max_abs_error,
           x.candidate_median_s, x.candidate_p10_s, x.candidate_p90_s, x.baseline_median_s, x.speedup, x.achieved_gbs,
           x.achieved_gflops, x.roofline_fraction, x.bottleneck, x.torch_eager_median_s, x.torch_compile_median_s, x.profile,
           x.metrics, x.attainable_fraction, x.bound);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, rank_record& x) {
  return f(caf::meta::type_name("rank_record"), x.session, x.rank, x.host, x.backend, x.state, x.evaluations, x.by_status,
           x.deadline_misses, x.busy_seconds, x.uptime_seconds, x.queue_depth, x.cpu_seconds);
}
}  // namespace kevolve::store

namespace kevolve::spec {
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, shape_point& x) {
  return f(caf::meta::type_name("shape_point"), x.name, x.values);
}
}  // namespace kevolve::spec

namespace kevolve::sweep {
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, eval_settings& x) {
  return f(caf::meta::type_name("eval_settings"), x.threads, x.budget_seconds, x.timeout_ms, x.trials, x.seed,
           x.torch_baselines, x.torch_compile, x.ncu, x.fitness);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, eval_request& x) {
  return f(caf::meta::type_name("eval_request"), x.id, x.task_id, x.op_source, x.op_hash, x.variant, x.backend, x.settings,
           x.node, x.code, x.shapes, x.best_fitness);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, eval_result& x) {
  return f(caf::meta::type_name("eval_result"), x.id, x.rank, x.error, x.status, x.fitness, x.reason, x.baseline, x.fitness_over, x.shapes,
           x.seconds);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, rank_hello& x) {
  return f(caf::meta::type_name("rank_hello"), x.rank, x.host, x.pid, x.local_rank, x.backend, x.error, x.kevolve_version);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, rank_start& x) {
  return f(caf::meta::type_name("rank_start"), x.device_index);
}
}  // namespace kevolve::sweep

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(kevolve::actors::synth_request)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(kevolve::actors::synth_reply)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(kevolve::store::sweep_record)

// The wire types: every rank registers the same block (one binary everywhere).
CAF_BEGIN_TYPE_ID_BLOCK(kevolve, caf::first_custom_type_id)
  CAF_ADD_TYPE_ID(kevolve, (kevolve::sweep::eval_request))
  CAF_ADD_TYPE_ID(kevolve, (kevolve::sweep::eval_result))
  CAF_ADD_TYPE_ID(kevolve, (kevolve::sweep::rank_hello))
  CAF_ADD_TYPE_ID(kevolve, (kevolve::sweep::rank_start))
  CAF_ADD_TYPE_ID(kevolve, (kevolve::store::rank_record))
  CAF_ADD_TYPE_ID(kevolve, (kevolve::actors::shutdown_msg))
  CAF_ADD_TYPE_ID(kevolve, (kevolve::actors::signal_notice))
  CAF_ADD_TYPE_ID(kevolve, (kevolve::actors::codec_failure))
  CAF_ADD_TYPE_ID(kevolve, (kevolve::actors::checkpoint_done))
  CAF_ADD_TYPE_ID(kevolve, (kevolve::actors::rank_bye))
  CAF_ADD_ATOM(kevolve, kevolve::actors, tick_atom, "tick")
  CAF_ADD_ATOM(kevolve, kevolve::actors, route_atom, "route")
  CAF_ADD_ATOM(kevolve, kevolve::actors, flush_atom, "flush")
CAF_END_TYPE_ID_BLOCK(kevolve)
