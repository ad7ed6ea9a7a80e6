// Recording commands and the dependency bookkeeping of circular buffers and
// accumulators, shared by every intrinsic.
#include <string>

#include "emu/mtia/device.h"

namespace kevolve::emu::mtia {

namespace {
// A dependency that is never satisfied (a slot nobody frees): the replay
// reports the deadlock.
constexpr cmd_ref unresolved{UINT32_MAX - 1, 0};
}  // namespace

void slot_ring::init(int32_t slots, int32_t virtual_depth) {
  n_slots = slots;
  depth = virtual_depth;
  pushes = pops = 0;
  back = front = 0;
  prod.assign(depth, cmd_ref{});
  popper.assign(depth, cmd_ref{});
  filled.assign(depth, 0);
}

void pe_state::reset_program_state() {
  store_used = 0;
  ls_used = 0;
  cbs.clear();
  acc_used = 0;
  accs.clear();
  b_k = b_n = 0;
  b_dtype = -1;
  loop_left = 0;
  loop_op = 0;
}

void pe_state::reset_launch() {
  reset_program_state();
  for (auto& in : inbox) in = inbox_state{};
  bcasts.clear();
  trace.clear();
  pre = pre_issue{};
  for (auto& q : queue) q.clear();
  program = -1;
}

command* device::record(pe_state& pe, uint8_t op, uint8_t eng, double work, cmd_kind kind) {
  if (++launch_commands_ > max_commands_per_launch) {
    fail(KV_MTIA_ERR_LIMIT, "launch records more than " + std::to_string(max_commands_per_launch) + " commands");
    return nullptr;
  }
  pe.trace.emplace_back();
  command& c = pe.trace.back();
  c.op = op;
  c.kind = kind;
  c.eng = eng;
  c.work = work;
  if (pe.loop_left > 0) {
    if (pe.loop_op == 0) {
      pe.loop_op = op;
    } else if (pe.loop_op != op) {
      fail(KV_MTIA_ERR_ARG, "pe " + std::to_string(pe.id) + ": kv_mtia_loop covers commands of one kind only");
      return nullptr;
    } else {
      c.free_issue = 1;
    }
    if (--pe.loop_left == 0) pe.loop_op = 0;
  }
  if (eng < n_engines) pe.queue[eng].push_back(static_cast<uint32_t>(pe.trace.size() - 1));
  if (pe.pre.open) {  // the replay's issue step for this command, done now while it is in the cache
    if (kind != cmd_kind::engine_op) {
      pe.pre.open = false;
    } else {
      c.issue = pe.pre.clock;
      if (!c.free_issue) {
        pe.pre.clock += p_.issue_cycles;
        pe.pre.busy += p_.issue_cycles;
        ++pe.pre.issued;
      }
      ++pe.pre.count;
    }
  }
  return &c;
}

cb_state* device::no_cb(pe_state& pe, int32_t cb, const char* what) {
  fail(KV_MTIA_ERR_ARG, "pe " + std::to_string(pe.id) + ": " + what + ": " + std::to_string(cb) +
                            " is not a circular buffer of this program");
  return nullptr;
}

void device::ring_push(slot_ring& r, cmd_ref producer) {
  command& c = pes_[producer.pe].trace[producer.idx];
  const int64_t k = r.pushes;
  if (k >= r.n_slots) {
    const int64_t j = k - r.n_slots;  // the push whose slot this one reuses
    c.dep[dep_out] = j < r.pops ? r.popper[r.wrap(r.back + r.depth - r.n_slots)] : unresolved;
  }
  r.prod[r.back] = producer;
  ++r.pushes;
  r.back = r.wrap(r.back + 1);
}

void device::ring_pop(slot_ring& r, cmd_ref popper) {
  r.popper[r.front] = popper;
  const int64_t later = r.pops + r.n_slots;  // a producer already waiting for this slot
  if (later < r.pushes) {
    const cmd_ref p = r.prod[r.wrap(r.front + r.n_slots)];
    pes_[p.pe].trace[p.idx].dep[dep_out] = popper;
  }
  ++r.pops;
  r.front = r.wrap(r.front + 1);
}

const uint8_t* device::cb_read(pe_state& pe, int32_t id, uint8_t eng, int64_t bytes, uint32_t flags, uint32_t cmd,
                               dep_slot slot, const char* what) {
  cb_state* cb = check_cb(pe, id, what);
  if (!cb) return nullptr;
  auto at = [&] { return "pe " + std::to_string(pe.id) + ": " + what + ": cb " + std::to_string(id); };
  if (cb->consumer == no_engine) cb->consumer = eng;
  if (cb->consumer != eng) {
    fail(KV_MTIA_ERR_ARG, at() + " is read by " + engine_name(eng) + " but its consumer is " +
                              engine_name(cb->consumer) + " (one consumer engine per circular buffer)");
    return nullptr;
  }
  if (bytes > cb->slot_bytes) {
    fail(KV_MTIA_ERR_ARG, at() + ": reads " + std::to_string(bytes) + " bytes, slots hold " +
                              std::to_string(cb->slot_bytes));
    return nullptr;
  }
  slot_ring& r = cb->ring;
  if (r.empty()) {
    fail(KV_MTIA_ERR_DEADLOCK, at() + " is empty: nothing was pushed to it earlier in program order");
    return nullptr;
  }
  const int64_t v = r.front;
  pe.trace[cmd].dep[slot] = r.prod[v];
  if (!(flags & KV_CB_KEEP)) ring_pop(r, cmd_ref{static_cast<uint32_t>(pe.id), cmd});
  return functional_ ? pe.store.data() + cb->offset + uint64_t(v) * cb->slot_bytes : nullptr;
}

uint8_t* device::cb_write(pe_state& pe, int32_t id, uint8_t eng, int64_t bytes, uint32_t cmd, const char* what) {
  cb_state* cb = check_cb(pe, id, what);
  if (!cb) return nullptr;
  auto at = [&] { return "pe " + std::to_string(pe.id) + ": " + what + ": cb " + std::to_string(id); };
  if (cb->producer == no_engine) cb->producer = eng;
  if (cb->producer != eng) {
    fail(KV_MTIA_ERR_ARG, at() + " is written by " + engine_name(eng) + " but its producer is " +
                              engine_name(cb->producer) + " (one producer engine per circular buffer)");
    return nullptr;
  }
  if (bytes > cb->slot_bytes) {
    fail(KV_MTIA_ERR_CAPACITY, at() + ": writes " + std::to_string(bytes) + " bytes, slots hold " +
                                   std::to_string(cb->slot_bytes));
    return nullptr;
  }
  slot_ring& r = cb->ring;
  if (r.full()) {
    fail(KV_MTIA_ERR_LIMIT, at() + ": " + std::to_string(r.pushes - r.pops) +
                                " pushes ahead of its pops in program order; pop (or issue the consumer) earlier");
    return nullptr;
  }
  const int64_t v = r.back;
  r.filled[v] = static_cast<int32_t>(bytes);
  ring_push(r, cmd_ref{static_cast<uint32_t>(pe.id), cmd});
  return functional_ ? pe.store.data() + cb->offset + uint64_t(v) * cb->slot_bytes : nullptr;
}

acc_state* device::no_acc(pe_state& pe, int32_t acc, const char* what) {
  fail(KV_MTIA_ERR_ARG, "pe " + std::to_string(pe.id) + ": " + what + ": " + std::to_string(acc) +
                            " is not an accumulator of this program");
  return nullptr;
}

void device::acc_deps(command& c, acc_state& a) {
  c.dep[dep_other] = a.last_read;
  if (c.dep[dep_in1].none()) c.dep[dep_in1] = a.last_write;
}

pe_state* device::neighbour(const pe_state& pe, int32_t dir) {
  int r = pe.row, c = pe.col;
  switch (dir) {
    case KV_DIR_NORTH: --r; break;
    case KV_DIR_SOUTH: ++r; break;
    case KV_DIR_EAST: ++c; break;
    case KV_DIR_WEST: --c; break;
    default: return nullptr;
  }
  if (r < 0 || c < 0 || r >= p_.pe_rows || c >= p_.pe_cols) return nullptr;
  return &pes_[static_cast<std::size_t>(r * static_cast<int>(p_.pe_cols) + c)];
}

}  // namespace kevolve::emu::mtia
