// One engine command of a PE's trace: a small POD. The functional side fills
// it when the kernel calls an intrinsic; the timing side replays the traces.
#pragma once

#include <cstdint>

namespace kevolve::emu::mtia {

// Engines of a PE; each runs its own queue in order.
enum engine : uint8_t { fi_in = 0, fi_out, dpe, re, se, vec, mlu, n_engines, no_engine = 255 };
// The PE's scalar core as a CB producer/consumer (sc_peek / sc_push); not an engine queue.
constexpr uint8_t scalar_core = n_engines;
const char* engine_name(int e);

// Commands the scalar core handles itself (no engine queue).
enum class cmd_kind : uint8_t {
  engine_op = 0,  // runs on `eng` (and `eng2` if set)
  fence,          // waits for every earlier command of the PE, then `work` cycles (next program)
  barrier,        // all PEs of the launch
  scalar,         // the scalar core itself: waits for its deps, then `work` cycles on the issue clock
};

// Intrinsic ids (command::op), for looped-instruction grouping.
enum op_id : uint8_t {
  op_none = 0, op_dma_in, op_dma_out, op_gather, op_load_b, op_mm, op_drain, op_send, op_recv, op_minmax,
  op_se, op_vec, op_row_accum, op_transpose, op_copy, op_concat, op_pop, op_int, op_cmp, op_lm_gather,
  op_sc_peek, op_sc_push, op_fill, op_seg_sum, op_cvt, op_pack
};

// A reference to a command: PE and index in that PE's trace.
struct cmd_ref {
  uint32_t pe = UINT32_MAX;
  uint32_t idx = 0;
  bool none() const { return pe == UINT32_MAX; }
};

// Dependency slots of a command.
enum dep_slot : uint8_t { dep_in0 = 0, dep_in1 = 1, dep_other = 2, dep_out = 3, n_deps = 4 };

// One host cache line: the replay touches every command of a launch's
// traces, far more than the cache holds.
struct alignas(64) command {
  double work = 0;    // engine cycles, or bytes for a DMA
  double issue = -1;  // issue time (cycles), -1 until known
  double end = -1;    // completion time, -1 until known
  cmd_ref dep[n_deps];
  uint16_t wake_pe = UINT16_MAX;  // PE to re-examine when this one completes
  uint8_t op = 0;                 // intrinsic id, for loop grouping and stats
  cmd_kind kind = cmd_kind::engine_op;
  uint8_t eng = no_engine;
  uint8_t eng2 = no_engine;
  uint8_t bcast_group = 1;  // DMA: PEs (of one column, <= 64) sharing this broadcast read; each counts 1/group
  // Zero in a value-initialised command (record() makes them so).
  uint8_t lvl : 4;         // DMA: memory level (see memory.h `level`), 0 otherwise
  uint8_t write : 1;       // DMA: 1 when it writes device memory
  uint8_t free_issue : 1;  // covered by a looped instruction: no issue cost
  // DMA: share of the shared resources.
  float weight() const { return 1.0f / static_cast<float>(bcast_group); }
};
static_assert(sizeof(command) == 64, "a command is one cache line");

}  // namespace kevolve::emu::mtia
