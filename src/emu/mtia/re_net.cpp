// The reduction network: an accumulator tile travels to the neighbouring PE's
// inbox (send), where the neighbour adds it to an accumulator (receive). The
// two PEs' programs may wait for each other here, so these intrinsics yield.
#include <algorithm>
#include <cmath>

#include "emu/mtia/device.h"

namespace kevolve::emu::mtia {

namespace {
std::string at(const pe_state& pe, const char* what) { return "pe " + std::to_string(pe.id) + ": " + what + ": "; }
}  // namespace

int device::re_send(int32_t acc, int32_t dir) {
  const char* what = "kv_mtia_re_send";
  pe_state* pe = current_pe(what);
  if (!pe) return result_.status;
  acc_state* a = check_acc(*pe, acc, what);
  if (!a) return result_.status;
  pe_state* nb = neighbour(*pe, dir);
  if (!nb || nb->id >= participants_)
    return fail(KV_MTIA_ERR_ARG, at(*pe, what) + "no PE of this launch in direction " + std::to_string(dir));
  inbox_state& in = nb->inbox[dir ^ 1];  // arrives from the opposite side
  if (in.ring.n_slots == 0) {
    const int32_t slots = static_cast<int32_t>(p_.re_inbox_slots);
    in.ring.init(slots, slots + 2);
    in.tile_floats = static_cast<int32_t>(p_.re_acc_bytes / 4);
    in.rows.assign(in.ring.depth, 0);
    in.cols.assign(in.ring.depth, 0);
    if (functional_) in.data.assign(size_t(in.ring.depth) * in.tile_floats, 0.0f);
  }
  struct arg_t {
    inbox_state* in;
  } arg{&in};
  if (wait_until([](device&, void* p) { return !static_cast<arg_t*>(p)->in->ring.full(); }, &arg)) return result_.status;
  a = &pe->accs[acc];
  command* c = record(*pe, op_send, re, std::ceil(double(a->rows) * a->cols * 4 / p_.re_send_bytes_per_cycle));
  if (!c) return result_.status;
  const uint32_t idx = static_cast<uint32_t>(pe->trace.size() - 1);
  c->wake_pe = static_cast<uint16_t>(nb->id);
  acc_deps(*c, *a);
  a->last_read = cmd_ref{static_cast<uint32_t>(pe->id), idx};
  const int64_t v = in.ring.back;
  in.rows[v] = a->rows;
  in.cols[v] = a->cols;
  if (functional_) {
    const float* src = pe->acc_pool.data() + a->offset;
    std::copy(src, src + size_t(a->rows) * a->cols, in.data.begin() + v * in.tile_floats);
  }
  ring_push(in.ring, cmd_ref{static_cast<uint32_t>(pe->id), idx});
  ++progress_;
  return KV_MTIA_OK;
}

int device::re_recv(int32_t acc, int32_t dir, int32_t add) {
  const char* what = "kv_mtia_re_recv";
  pe_state* pe = current_pe(what);
  if (!pe) return result_.status;
  if (!check_acc(*pe, acc, what)) return result_.status;
  pe_state* nb = neighbour(*pe, dir);
  if (!nb || nb->id >= participants_)
    return fail(KV_MTIA_ERR_ARG, at(*pe, what) + "no PE of this launch in direction " + std::to_string(dir));
  inbox_state& in = pe->inbox[dir];
  struct arg_t {
    inbox_state* in;
  } arg{&in};
  if (wait_until([](device&, void* p) { return !static_cast<arg_t*>(p)->in->ring.empty(); }, &arg)) return result_.status;
  acc_state* a = &pe->accs[acc];
  const int64_t v = in.ring.front;
  if (in.rows[v] != a->rows || in.cols[v] != a->cols)
    return fail(KV_MTIA_ERR_ARG, at(*pe, what) + "received a " + std::to_string(in.rows[v]) + " x " +
                                     std::to_string(in.cols[v]) + " tile into a " + std::to_string(a->rows) + " x " +
                                     std::to_string(a->cols) + " accumulator");
  command* c = record(*pe, op_recv, re, std::ceil(double(a->rows) * a->cols * 4 / p_.re_bytes_per_cycle));
  if (!c) return result_.status;
  const uint32_t idx = static_cast<uint32_t>(pe->trace.size() - 1);
  c->wake_pe = static_cast<uint16_t>(nb->id);
  c->dep[dep_in0] = in.ring.prod[v];
  acc_deps(*c, *a);
  a->last_write = cmd_ref{static_cast<uint32_t>(pe->id), idx};
  if (functional_) {
    float* dst = pe->acc_pool.data() + a->offset;
    const float* src = in.data.data() + v * in.tile_floats;
    const size_t n = size_t(a->rows) * a->cols;
    if (add)
      for (size_t i = 0; i < n; ++i) dst[i] += src[i];
    else
      std::copy(src, src + n, dst);
  }
  ring_pop(in.ring, cmd_ref{static_cast<uint32_t>(pe->id), idx});
  ++progress_;
  return KV_MTIA_OK;
}

}  // namespace kevolve::emu::mtia
