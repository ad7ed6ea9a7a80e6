// Functional state of one PE: circular buffers, RE accumulators, the DPE's
// B-cache, the neighbour inboxes and the command trace of the current launch.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "emu/mtia/command.h"

namespace kevolve::emu::mtia {

// Order bookkeeping of a buffer with n_slots physical slots whose data lives
// in `depth` >= n_slots virtual slots, so that a producer issued ahead of its
// consumer (legal: the hardware engine just waits for the slot) keeps its
// data. For push k: prod[k % depth] made it, popper[k % depth] freed it.
struct slot_ring {
  int32_t n_slots = 0, depth = 0;
  int64_t pushes = 0, pops = 0;
  int32_t back = 0, front = 0;  // pushes % depth, pops % depth (kept, not divided)
  std::vector<cmd_ref> prod, popper;
  std::vector<int32_t> filled;  // bytes (or floats) written per virtual slot
  void init(int32_t slots, int32_t virtual_depth);
  bool empty() const { return pops >= pushes; }
  bool full() const { return pushes - pops >= depth; }
  // Virtual slot of back + d or front + d, 0 <= d <= depth.
  int32_t wrap(int32_t v) const { return v >= depth ? v - depth : v; }
};

// A circular buffer in local memory (capacity charged for n_slots slots).
struct cb_state {
  int32_t slot_bytes = 0;
  uint64_t offset = 0;  // into pe_state::store
  uint8_t producer = no_engine, consumer = no_engine;
  slot_ring ring;
  int32_t filling = 0;  // kv_mtia_mlu_pack: the next part of the open back slot
};

struct acc_state {
  int32_t rows = 0, cols = 0;
  uint64_t offset = 0;  // floats into pe_state::acc_pool
  cmd_ref last_write, last_read;
};

// Cross-PE buffer of the reduction network (one per incoming direction).
struct inbox_state {
  int32_t tile_floats = 0;
  std::vector<float> data;  // depth * tile_floats
  std::vector<int32_t> rows, cols;
  slot_ring ring;
};

struct bcast_record {
  uint32_t seq;   // k-th broadcast read of this PE in the launch
  uint32_t idx;   // command index
  uint64_t addr, rows, row_bytes, stride;
};

// The scalar core's issue of a trace's leading engine commands (those before
// its first fence, barrier or scalar-core command) depends on nothing the
// replay computes: record() does it as they are recorded, with the replay's
// arithmetic, and the replay starts issuing after them.
struct pre_issue {
  bool open = true;      // no fence, barrier or scalar-core command yet
  uint32_t count = 0;    // commands issued
  double clock = 0, busy = 0;  // the replay's issue clock and issue-busy cycles after them
  uint64_t issued = 0;   // of them not covered by a looped instruction
};

struct pe_state {
  int id = 0, row = 0, col = 0;
  int program = -1;  // program running now
  // functional
  std::vector<uint8_t> store;  // backing of all CBs (reused across programs)
  uint64_t store_used = 0;
  uint64_t ls_used = 0;        // charged local memory
  std::vector<cb_state> cbs;
  std::vector<float> acc_pool;
  uint64_t acc_used = 0;
  std::vector<acc_state> accs;
  std::vector<float> bcache;
  std::vector<float> scratch;  // reused by intrinsics, never per command
  int32_t b_k = 0, b_n = 0, b_dtype = -1;
  std::array<inbox_state, 4> inbox;
  std::vector<bcast_record> bcasts;
  uint32_t loop_left = 0;
  uint8_t loop_op = 0;
  // trace of the current launch
  std::vector<command> trace;
  pre_issue pre;
  std::array<std::vector<uint32_t>, n_engines> queue;
  int64_t flops = 0;

  void reset_program_state();
  void reset_launch();
};

}  // namespace kevolve::emu::mtia
