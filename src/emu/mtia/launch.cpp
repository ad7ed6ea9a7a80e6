// kv_mtia_launch: runs the programs of a launch in fibers (one per PE), then
// hands the recorded traces to the timing model.
#include <algorithm>
#include <tuple>

#include "emu/mtia/device.h"
#include "emu/mtia/timing.h"

namespace kevolve::emu::mtia {

void device::fiber_entry(void* arg) {
  auto* self = static_cast<device*>(arg);
  self->run_programs_on(self->current_);
}

void device::run_programs_on(int pe_index) {
  pe_state& pe = pes_[pe_index];
  const int pes = p_.pes();
  for (int32_t prog = pe_index; prog < num_programs_ && !failed(); prog += pes) {
    if (prog != pe_index) {  // the next program on this PE: wait for the last one, then switch
      if (!record(pe, 0, no_engine, p_.program_switch_cycles, cmd_kind::fence)) return;
    }
    pe.reset_program_state();
    pe.program = prog;
    fn_(&handle_, user_);
  }
}

int device::wait_until(bool (*ready)(device&, void*), void* arg) {
  while (!ready(*this, arg)) {
    if (failed()) return result_.status;
    fibers_[current_]->yield();
  }
  return failed() ? result_.status : KV_MTIA_OK;
}

int device::launch(int32_t n, kv_mtia_program_fn fn, const void* user) {
  if (failed()) return result_.status;
  if (in_launch_) return fail(KV_MTIA_ERR_STATE, "kv_mtia_launch: called inside a program (launches do not nest)");
  if (n <= 0 || n > (1 << 20) || !fn) return fail(KV_MTIA_ERR_ARG, "kv_mtia_launch: needs 1..1048576 programs and a function");
  in_launch_ = true;
  num_programs_ = n;
  fn_ = fn;
  user_ = user;
  participants_ = std::min<int>(n, p_.pes());
  launch_commands_ = 0;
  barrier_arrivals_.clear();
  pe_barriers_.assign(pes_.size(), 0);
  for (auto& pe : pes_) pe.reset_launch();
  for (int i = 0; i < participants_; ++i) {
    if (!fibers_[i]->start(&device::fiber_entry, this)) {
      in_launch_ = false;
      return fail(KV_MTIA_ERR_LIMIT, "kv_mtia_launch: cannot map a program stack");
    }
  }
  // Round-robin until every program has returned. A round in which no fiber
  // finished and nothing moved between PEs is a deadlock; the blocked
  // intrinsics then return the error and the programs run out.
  int finished = 0;
  while (finished < participants_) {
    const uint64_t before = progress_;
    const int finished_before = finished;
    for (int i = 0; i < participants_; ++i) {
      if (fibers_[i]->done()) continue;
      current_ = i;
      if (fibers_[i]->resume()) ++finished;
      current_ = -1;
    }
    if (finished < participants_ && finished == finished_before && progress_ == before && !failed())
      fail(KV_MTIA_ERR_DEADLOCK, "kv_mtia_launch: programs wait for each other forever (a barrier not reached by "
                                 "every program, or a neighbour receive with no matching send)");
  }
  in_launch_ = false;
  num_programs_ = 0;
  if (failed()) return result_.status;
  assign_broadcast_weights();
  std::string error;
  if (!mtia::replay_launch(p_, pes_, participants_, result_, &error)) return fail(KV_MTIA_ERR_DEADLOCK, error);
  return KV_MTIA_OK;
}

int device::barrier() {
  pe_state* pe = current_pe("kv_mtia_barrier");
  if (!pe) return result_.status;
  if (num_programs_ > p_.pes())
    return fail(KV_MTIA_ERR_ARG, "kv_mtia_barrier: needs at most one program per PE (" +
                                     std::to_string(num_programs_) + " programs)");
  if (!record(*pe, 0, no_engine, p_.barrier_cycles, cmd_kind::barrier)) return result_.status;
  const std::size_t g = static_cast<std::size_t>(pe_barriers_[pe->id]++);
  if (barrier_arrivals_.size() <= g) barrier_arrivals_.resize(g + 1, 0);
  ++barrier_arrivals_[g];
  ++progress_;
  struct arg_t {
    std::size_t g;
  } arg{g};
  return wait_until(
      [](device& d, void* a) {
        return d.barrier_arrivals_[static_cast<arg_t*>(a)->g] >= d.participants_;
      },
      &arg);
}

int device::issue_loop(int32_t n) {
  pe_state* pe = current_pe("kv_mtia_loop");
  if (!pe) return result_.status;
  if (n < 1 || n > p_.loop_max)
    return fail(KV_MTIA_ERR_ARG, "kv_mtia_loop: n must be in 1.." + std::to_string(static_cast<int>(p_.loop_max)));
  pe->loop_left = static_cast<uint32_t>(n);
  pe->loop_op = 0;
  return KV_MTIA_OK;
}

// PEs of a column that issue the same k-th broadcast read share it: each
// member counts 1/g on the shared resources.
void device::assign_broadcast_weights() {
  const int cols = static_cast<int>(p_.pe_cols);
  std::vector<std::tuple<uint32_t, uint64_t, uint64_t, uint64_t, uint64_t, int, uint32_t>> keys;
  for (int c = 0; c < cols; ++c) {
    keys.clear();
    for (int i = c; i < participants_; i += cols)
      for (const auto& b : pes_[i].bcasts) keys.emplace_back(b.seq, b.addr, b.rows, b.row_bytes, b.stride, i, b.idx);
    std::sort(keys.begin(), keys.end());
    for (std::size_t lo = 0; lo < keys.size();) {
      std::size_t hi = lo + 1;
      auto same = [&](std::size_t a, std::size_t b) {
        return std::get<0>(keys[a]) == std::get<0>(keys[b]) && std::get<1>(keys[a]) == std::get<1>(keys[b]) &&
               std::get<2>(keys[a]) == std::get<2>(keys[b]) && std::get<3>(keys[a]) == std::get<3>(keys[b]) &&
               std::get<4>(keys[a]) == std::get<4>(keys[b]);
      };
      while (hi < keys.size() && same(lo, hi)) ++hi;
      for (std::size_t k = lo; k < hi; ++k)
        pes_[std::get<5>(keys[k])].trace[std::get<6>(keys[k])].bcast_group = static_cast<uint8_t>(hi - lo);
      lo = hi;
    }
  }
}

}  // namespace kevolve::emu::mtia
