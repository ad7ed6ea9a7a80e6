// The emulated chip as one object: device memory, 64 PEs, the intrinsic
// implementations (functional, recording a per-PE command trace) and the
// timing replay at the end of every launch.
//
//   device dev(mtia2i());
//   uint64_t a = dev.alloc(level::sram, bytes, &err);   // the harness fills dev.host(a, bytes)
//   dev.begin_run();
//   kevolve_kernel(&args, dev.handle());                 // a candidate, via the C ABI
//   run_result r = dev.end_run();
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "emu/mtia/fiber.h"
#include "emu/mtia/memory.h"
#include "emu/mtia/params.h"
#include "emu/mtia/pe_state.h"
#include "emu/mtia/result.h"
#include "kevolve/mtia.h"

namespace kevolve::emu::mtia {

class device {
 public:
  // Commands one launch may record over all PEs.
  static constexpr uint64_t max_commands_per_launch = uint64_t(1) << 22;

  explicit device(params p);
  device(const device&) = delete;
  device& operator=(const device&) = delete;

  kv_mtia_device* handle() { return &handle_; }
  const params& config() const { return p_; }

  // Device memory for the harness: allocate, then read/write through host().
  uint64_t alloc(level where, uint64_t bytes, std::string* error);
  uint8_t* host(uint64_t addr, uint64_t len) { return mem_.resolve(addr, len, nullptr); }
  void free_all() { mem_.clear(); }

  // Off: intrinsics validate, trace and time but skip the arithmetic (for
  // timing large shapes whose results were verified at smaller ones).
  void set_functional(bool on) { functional_ = on; }

  void begin_run();
  run_result end_run();
  const run_result& current() const { return result_; }

  // ---- intrinsics (the kv_mtia_api table calls these) ----
  int launch(int32_t n, kv_mtia_program_fn fn, const void* user);
  int32_t query(int32_t what);
  int cb_alloc(int32_t slot_bytes, int32_t n_slots);
  int cb_pop(int32_t cb);
  int issue_loop(int32_t n);
  int barrier();
  int dma_in(int32_t cb, const kv_mtia_view& src, bool bcast);
  int dma_out(const kv_mtia_view& dst, int32_t cb, uint32_t flags);
  int dma_gather(int32_t cb, uint64_t table, int64_t table_rows, int64_t row_bytes, int64_t row_stride,
                 int32_t idx_cb, int32_t n_idx, int32_t idx_dtype, uint32_t flags);
  int acc_alloc(int32_t rows, int32_t cols);
  int dpe_load_b(int32_t cb, int32_t k, int32_t n, int32_t dtype, uint32_t flags);
  int dpe_mm(int32_t cb_a, int32_t m, int32_t k, int32_t lda, int32_t acc, uint32_t flags);
  int re_drain(int32_t acc, int32_t cb_out, int32_t out_dtype, int32_t se_op, int32_t cb_bias, uint32_t bias_flags);
  int re_send(int32_t acc, int32_t dir);
  int re_recv(int32_t acc, int32_t dir, int32_t add);
  int re_minmax(int32_t acc, int32_t cb_out);
  int elementwise(bool on_vec, int32_t op, int32_t cb_x, uint32_t x_flags, int32_t cb_y, uint32_t y_flags,
                  int32_t y_bcast, int32_t cb_out, int32_t rows, int32_t cols, int32_t in_dtype, int32_t out_dtype,
                  float a, float b);
  int se_row_accum(int32_t cb_in, uint32_t flags, int32_t rows, int32_t cols, int32_t in_dtype, int32_t cb_out,
                   int32_t out_dtype);
  int mlu_transpose(int32_t cb_in, uint32_t flags, int32_t rows, int32_t cols, int32_t elem_bytes, int32_t cb_out);
  int mlu_copy(int32_t cb_in, uint32_t flags, int32_t in_offset, int32_t rows, int32_t row_bytes, int32_t in_stride,
               int32_t cb_out);
  int mlu_concat(int32_t cb_a, int32_t cb_b, uint32_t flags, int32_t rows, int32_t a_row_bytes, int32_t b_row_bytes,
                 int32_t cb_out);
  // integer ops, compares, local-memory gather (int_vec.cpp)
  int int_op(bool on_vec, int32_t op, int32_t cb_x, uint32_t x_flags, int32_t cb_y, uint32_t y_flags, int32_t cb_out,
             int32_t n, int32_t dtype, uint64_t imm);
  int cmp(bool on_vec, int32_t cmp, int32_t cb_x, uint32_t x_flags, int32_t cb_y, uint32_t y_flags, int32_t cb_out,
          int32_t n, int32_t in_dtype);
  int lm_gather(bool on_vec, int32_t cb_table, uint32_t table_flags, int32_t table_elems, int32_t dtype,
                int32_t cb_idx, uint32_t idx_flags, int32_t cb_out, int32_t n, int32_t offset);
  // gather/segment class (scalar_seg.cpp)
  int sc_peek_int(int32_t cb, int32_t dtype, int64_t index, uint32_t flags, int64_t* value);
  int sc_push_int(int32_t cb, int32_t dtype, const int64_t* values, int32_t n);
  int se_fill(int32_t cb_out, int32_t rows, int32_t cols, int32_t dtype, float value);
  int re_segment_sum(int32_t cb_rows, uint32_t rows_flags, int32_t rows, int32_t cols, int32_t in_dtype,
                     int64_t row_base, const kv_mtia_segments& seg, int32_t acc, uint32_t acc_flags);
  // float-to-integer conversion (convert.cpp)
  int cvt_f2i(bool on_vec, int32_t cb_x, uint32_t x_flags, int32_t cb_out, int32_t n, int32_t in_dtype, float a, float b,
              int32_t lo, int32_t hi);
  // packing into a staging slot (mlu_pack.cpp)
  int mlu_pack(int32_t cb_in, uint32_t in_flags, int32_t rows, int32_t cols, int32_t ld, int32_t elem_bytes,
               int32_t lower, int32_t cb_out, int32_t part, int32_t parts);

 private:
  // error handling: the first error is sticky
  int fail(int status, const std::string& what);
  bool failed() const { return result_.status != 0; }
  // The PE whose program runs now; nullptr + error when failed or outside a program.
  pe_state* current_pe(const char* intrinsic) {
    if (!failed() && current_ >= 0) return &pes_[current_];
    return no_current_pe(intrinsic);
  }
  pe_state* no_current_pe(const char* intrinsic);

  // A run whose commands depend on data (peeks, padded gathers) needs the
  // arithmetic: in a timing-only run such an intrinsic fails with this message
  // and run_result::needs_functional set, and the caller reruns functionally.
  int need_functional(const char* what);
  command* record_scalar(pe_state& pe, uint8_t op, double work);

  // tracing helpers (trace.cpp)
  // Appends a command of `kind` (an engine_op runs on `eng`); nullptr + error past the launch limit.
  command* record(pe_state& pe, uint8_t op, uint8_t eng, double work, cmd_kind kind = cmd_kind::engine_op);
  cb_state* check_cb(pe_state& pe, int32_t cb, const char* what) {
    if (cb >= 0 && cb < static_cast<int32_t>(pe.cbs.size())) return &pe.cbs[cb];
    return no_cb(pe, cb, what);
  }
  cb_state* no_cb(pe_state& pe, int32_t cb, const char* what);
  // Consumer side: front slot of cb read by engine `eng` into dep slot; nullptr + error on failure.
  const uint8_t* cb_read(pe_state& pe, int32_t cb, uint8_t eng, int64_t bytes, uint32_t flags, uint32_t cmd,
                         dep_slot slot, const char* what);
  // Producer side: back slot of cb written by engine `eng`.
  uint8_t* cb_write(pe_state& pe, int32_t cb, uint8_t eng, int64_t bytes, uint32_t cmd, const char* what);
  void ring_push(slot_ring& r, cmd_ref producer);
  void ring_pop(slot_ring& r, cmd_ref popper);
  int check_view(const kv_mtia_view& v, const char* what, level* lvl, uint8_t** host, double* charged);
  acc_state* check_acc(pe_state& pe, int32_t acc, const char* what) {
    if (acc >= 0 && acc < static_cast<int32_t>(pe.accs.size())) return &pe.accs[acc];
    return no_acc(pe, acc, what);
  }
  acc_state* no_acc(pe_state& pe, int32_t acc, const char* what);
  void acc_deps(command& c, acc_state& a);
  pe_state* neighbour(const pe_state& pe, int32_t dir);

  // launch machinery (launch.cpp)
  static void fiber_entry(void* arg);
  void run_programs_on(int pe_index);
  int wait_until(bool (*ready)(device&, void*), void* arg);  // yield until ready() or deadlock
  void assign_broadcast_weights();

  params p_;
  memory mem_;
  std::vector<pe_state> pes_;
  std::vector<std::unique_ptr<fiber>> fibers_;
  kv_mtia_api api_{};
  kv_mtia_device handle_{};
  run_result result_;
  bool functional_ = true;
  bool in_launch_ = false;
  int current_ = -1;  // PE whose fiber runs now
  int32_t num_programs_ = 0;
  int participants_ = 0;
  kv_mtia_program_fn fn_ = nullptr;
  const void* user_ = nullptr;
  uint64_t launch_commands_ = 0;
  uint64_t progress_ = 0;  // bumped by every cross-PE push/pop and barrier arrival
  std::vector<int32_t> barrier_arrivals_;
  std::vector<int32_t> pe_barriers_;
  bool deadlock_ = false;
  struct mm_cost {  // cycles of the last dpe_mm shape (p_ never changes)
    int32_t m = -1, k = -1, n = -1;
    double cycles = 0;
  } mm_cost_;
};

}  // namespace kevolve::emu::mtia
