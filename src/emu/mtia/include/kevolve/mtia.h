/* kevolve MTIA-like emulator: the intrinsic API a mtia_emu candidate calls.
 *
 * A candidate is one C++ file that includes <kevolve/abi.h> and this header
 * and exports
 *
 *   extern "C" int kevolve_kernel(const kv_args* args, kv_mtia_device* dev);
 *
 * Tensor `data` pointers in kv_args are *device addresses* (DRAM or the
 * SRAM scratch, LLS), not host pointers: dereferencing one faults. Data moves
 * only through DMA intrinsics into circular buffers (CBs) in a PE's local
 * memory, and all arithmetic happens in engine intrinsics; host arithmetic is
 * neither needed nor costed. The kernel calls kv_mtia_launch(), which runs
 * the program function once per program id, program p on PE p % 64.
 *
 * Every intrinsic is a command for one engine of the current PE (or the
 * scalar core). Commands issue in program order (kv_mtia_issue cycles each)
 * and each engine runs its own queue in order; a command starts when its
 * inputs are in their CBs and its output CB has a free slot.
 *
 * CB rules: a producer writes the back slot and pushes it; a consumer reads
 * the front slot and pops it unless KV_CB_KEEP is given (then kv_mtia_cb_pop
 * frees it later). Each CB has one producer engine and one consumer engine.
 * The ABI is a function table behind the device handle, so a candidate
 * shared object links against nothing. Every call returns a kv_mtia_status;
 * the first error is sticky and ends the run with that status and message.
 */
#ifndef KEVOLVE_MTIA_H
#define KEVOLVE_MTIA_H

#include <stdint.h>

#include "kevolve/abi.h"

#ifdef __cplusplus
extern "C" {
#endif

#define KV_MTIA_API_VERSION 1

typedef enum kv_mtia_status {
  KV_MTIA_OK = 0,
  KV_MTIA_ERR_ARG = 10,      /* bad argument: shape, dtype, cb id, op */
  KV_MTIA_ERR_ALIGN = 11,    /* DMA address or stride not 32-byte aligned */
  KV_MTIA_ERR_ADDRESS = 12,  /* outside device memory */
  KV_MTIA_ERR_CAPACITY = 13, /* local memory, B-cache, accumulator or SRAM overflow */
  KV_MTIA_ERR_DEADLOCK = 14, /* a CB wait that can never be satisfied */
  KV_MTIA_ERR_LIMIT = 15,    /* too many commands, programs or CBs */
  KV_MTIA_ERR_STATE = 16     /* intrinsic outside a program, nested launch */
} kv_mtia_status;

/* Flags of an input operand. */
#define KV_CB_POP 0u  /* pop the front slot after reading (default) */
#define KV_CB_KEEP 1u /* keep it; a later read or kv_mtia_cb_pop frees it */
/* kv_mtia_dpe_mm, kv_mtia_re_segment_sum: start a fresh accumulation instead of adding. */
#define KV_MM_ZERO 2u
/* kv_mtia_dma_gather (with the index flags): a negative index yields a row
 * of zeros and moves no bytes (padding). */
#define KV_GATHER_ZERO_NEG 4u

/* Segment boundaries for kv_mtia_re_segment_sum: count + 1 non-decreasing
 * integers (KV_I32 or KV_I64) starting at element `first` of the front slot
 * of cb; segment s is the positions [b[first+s], b[first+s+1]). */
typedef struct kv_mtia_segments {
  int32_t cb;
  uint32_t flags; /* KV_CB_KEEP keeps the boundary slot for the next call */
  int32_t dtype;
  int32_t first;
  int32_t count;
} kv_mtia_segments;

/* A strided 2-D region of device memory: `rows` rows of `row_bytes`
 * contiguous bytes, row starts `stride_bytes` apart. With the default profile
 * (mtia2i) `addr` and `stride_bytes` must be multiples of 32; any length is
 * allowed and is charged in whole 32-byte granules. */
typedef struct kv_mtia_view {
  uint64_t addr;
  int64_t rows;
  int64_t row_bytes;
  int64_t stride_bytes;
} kv_mtia_view;

/* Elementwise / reduction ops of the SIMD engine (SE) and vector core (VEC).
 * Unary ops compute op(a*x + b) in fp32; LUT ops cost the SE LUT rate. */
typedef enum kv_mtia_op {
  KV_OP_COPY = 0,
  KV_OP_RELU = 1,
  KV_OP_NEG = 2,
  KV_OP_SQUARE = 3,
  KV_OP_EXP = 16, /* LUT ops from here */
  KV_OP_GELU = 17, /* exact erf form */
  KV_OP_SIGMOID = 18,
  KV_OP_SILU = 19,
  KV_OP_TANH = 20,
  KV_OP_RSQRT = 21,
  KV_OP_RECIP = 22,
  KV_OP_LOG = 23,
  KV_OP_ADD = 32, /* binary ops from here */
  KV_OP_SUB = 33,
  KV_OP_MUL = 34,
  KV_OP_MAX = 35,
  KV_OP_MIN = 36,
  KV_OP_DIV = 37,
  KV_OP_SUM = 48, /* row reductions from here */
  KV_OP_RMAX = 49,
  KV_OP_CUMSUM = 64 /* vector core only: inclusive prefix sum along rows */
} kv_mtia_op;

/* How operand y of a binary op lines up with x (rows x cols). */
typedef enum kv_mtia_bcast {
  KV_Y_FULL = 0, /* y is rows x cols */
  KV_Y_ROW = 1,  /* y is one row of cols, reused for every row */
  KV_Y_COL = 2   /* y is one value per row (rows values) */
} kv_mtia_bcast;

/* Neighbour directions for the reduction network. */
typedef enum kv_mtia_dir { KV_DIR_NORTH = 0, KV_DIR_SOUTH = 1, KV_DIR_EAST = 2, KV_DIR_WEST = 3 } kv_mtia_dir;

typedef struct kv_mtia_device kv_mtia_device;
typedef void (*kv_mtia_program_fn)(kv_mtia_device* dev, const void* user);

/* The function table; use the inline wrappers below. */
typedef struct kv_mtia_api {
  uint32_t version;
  uint32_t size; /* sizeof(kv_mtia_api) */
  int (*launch)(kv_mtia_device*, int32_t num_programs, kv_mtia_program_fn, const void* user);
  int32_t (*query)(kv_mtia_device*, int32_t what);
  int (*cb_alloc)(kv_mtia_device*, int32_t slot_bytes, int32_t n_slots);
  int (*cb_pop)(kv_mtia_device*, int32_t cb);
  int (*issue_loop)(kv_mtia_device*, int32_t n);
  int (*barrier)(kv_mtia_device*);
  int (*dma_in)(kv_mtia_device*, int32_t cb, const kv_mtia_view* src, int32_t bcast);
  int (*dma_out)(kv_mtia_device*, const kv_mtia_view* dst, int32_t cb, uint32_t flags);
  int (*dma_gather)(kv_mtia_device*, int32_t cb, uint64_t table, int64_t table_rows, int64_t row_bytes,
                    int64_t row_stride, int32_t idx_cb, int32_t n_idx, int32_t idx_dtype, uint32_t flags);
  int (*acc_alloc)(kv_mtia_device*, int32_t rows, int32_t cols);
  int (*dpe_load_b)(kv_mtia_device*, int32_t cb, int32_t k, int32_t n, int32_t dtype, uint32_t flags);
  int (*dpe_mm)(kv_mtia_device*, int32_t cb_a, int32_t m, int32_t k, int32_t lda, int32_t acc, uint32_t flags);
  int (*re_drain)(kv_mtia_device*, int32_t acc, int32_t cb_out, int32_t out_dtype, int32_t se_op,
                  int32_t cb_bias, uint32_t bias_flags);
  int (*re_send)(kv_mtia_device*, int32_t acc, int32_t dir);
  int (*re_recv)(kv_mtia_device*, int32_t acc, int32_t dir, int32_t add);
  int (*re_minmax)(kv_mtia_device*, int32_t acc, int32_t cb_out);
  int (*elementwise)(kv_mtia_device*, int32_t engine_vec, int32_t op, int32_t cb_x, uint32_t x_flags, int32_t cb_y,
                     uint32_t y_flags, int32_t y_bcast, int32_t cb_out, int32_t rows, int32_t cols,
                     int32_t in_dtype, int32_t out_dtype, float a, float b);
  int (*se_row_accum)(kv_mtia_device*, int32_t cb_in, uint32_t flags, int32_t rows, int32_t cols,
                      int32_t in_dtype, int32_t cb_out, int32_t out_dtype);
  int (*mlu_transpose)(kv_mtia_device*, int32_t cb_in, uint32_t flags, int32_t rows, int32_t cols,
                       int32_t elem_bytes, int32_t cb_out);
  int (*mlu_copy)(kv_mtia_device*, int32_t cb_in, uint32_t flags, int32_t in_offset, int32_t rows,
                  int32_t row_bytes, int32_t in_stride, int32_t cb_out);
  int (*mlu_concat)(kv_mtia_device*, int32_t cb_a, int32_t cb_b, uint32_t flags, int32_t rows,
                    int32_t a_row_bytes, int32_t b_row_bytes, int32_t cb_out);
  /* integer ops, compares and local-memory gather (see below) */
  int (*int_op)(kv_mtia_device*, int32_t engine_vec, int32_t op, int32_t cb_x, uint32_t x_flags, int32_t cb_y,
                uint32_t y_flags, int32_t cb_out, int32_t n, int32_t dtype, uint64_t imm);
  int (*cmp)(kv_mtia_device*, int32_t engine_vec, int32_t cmp, int32_t cb_x, uint32_t x_flags, int32_t cb_y,
             uint32_t y_flags, int32_t cb_out, int32_t n, int32_t in_dtype);
  int (*lm_gather)(kv_mtia_device*, int32_t engine_vec, int32_t cb_table, uint32_t table_flags, int32_t table_elems,
                   int32_t dtype, int32_t cb_idx, uint32_t idx_flags, int32_t cb_out, int32_t n, int32_t offset);
  /* gather/segment class (data-dependent control flow), see below */
  int (*sc_peek_int)(kv_mtia_device*, int32_t cb, int32_t dtype, int64_t index, uint32_t flags, int64_t* value);
  int (*sc_push_int)(kv_mtia_device*, int32_t cb, int32_t dtype, const int64_t* values, int32_t n);
  int (*se_fill)(kv_mtia_device*, int32_t cb_out, int32_t rows, int32_t cols, int32_t dtype, float value);
  int (*re_segment_sum)(kv_mtia_device*, int32_t cb_rows, uint32_t rows_flags, int32_t rows, int32_t cols,
                        int32_t in_dtype, int64_t row_base, const struct kv_mtia_segments* seg, int32_t acc,
                        uint32_t acc_flags);
  /* float-to-integer conversion, see below */
  int (*cvt_f2i)(kv_mtia_device*, int32_t engine_vec, int32_t cb_x, uint32_t x_flags, int32_t cb_out, int32_t n,
                 int32_t in_dtype, float a, float b, int32_t lo, int32_t hi);
  /* packing into a staging slot on the MLU, see below */
  int (*mlu_pack)(kv_mtia_device*, int32_t cb_in, uint32_t in_flags, int32_t rows, int32_t cols, int32_t ld,
                  int32_t elem_bytes, int32_t lower, int32_t cb_out, int32_t part, int32_t parts);
} kv_mtia_api;

struct kv_mtia_device {
  const kv_mtia_api* api;
  void* impl; /* the emulator's; opaque to kernels */
};

/* kv_mtia_query keys. */
#define KV_MTIA_Q_PROGRAM_ID 0
#define KV_MTIA_Q_NUM_PROGRAMS 1
#define KV_MTIA_Q_PE_ROW 2
#define KV_MTIA_Q_PE_COL 3
#define KV_MTIA_Q_GRID_ROWS 4
#define KV_MTIA_Q_GRID_COLS 5
#define KV_MTIA_Q_LS_BYTES 6 /* local memory per PE */
#define KV_MTIA_Q_ALIGN 7    /* DMA alignment in bytes (1 = unaligned allowed) */
#define KV_MTIA_Q_ACC_BYTES 8 /* RE accumulator bytes per PE (fp32 tiles of kv_mtia_acc_alloc) */

/* ---- grid, programs, synchronization --------------------------------- */
/* Runs fn once per program id; costs the profile's launch time. */
static inline int kv_mtia_launch(kv_mtia_device* d, int32_t n, kv_mtia_program_fn fn, const void* user) {
  return d->api->launch(d, n, fn, user);
}
static inline int32_t kv_mtia_program_id(kv_mtia_device* d) { return d->api->query(d, KV_MTIA_Q_PROGRAM_ID); }
static inline int32_t kv_mtia_num_programs(kv_mtia_device* d) { return d->api->query(d, KV_MTIA_Q_NUM_PROGRAMS); }
static inline int32_t kv_mtia_pe_row(kv_mtia_device* d) { return d->api->query(d, KV_MTIA_Q_PE_ROW); }
static inline int32_t kv_mtia_pe_col(kv_mtia_device* d) { return d->api->query(d, KV_MTIA_Q_PE_COL); }
static inline int32_t kv_mtia_grid_rows(kv_mtia_device* d) { return d->api->query(d, KV_MTIA_Q_GRID_ROWS); }
static inline int32_t kv_mtia_grid_cols(kv_mtia_device* d) { return d->api->query(d, KV_MTIA_Q_GRID_COLS); }
static inline int32_t kv_mtia_query(kv_mtia_device* d, int32_t what) { return d->api->query(d, what); }
/* All PEs of the launch wait for each other (needs programs <= PEs). */
static inline int kv_mtia_barrier(kv_mtia_device* d) { return d->api->barrier(d); }
/* The next n commands (all of one kind) issue as one looped instruction
 * (auto-increment / multi-context): one issue cost instead of n. */
static inline int kv_mtia_loop(kv_mtia_device* d, int32_t n) { return d->api->issue_loop(d, n); }

/* ---- circular buffers in local memory --------------------------------- */
/* Returns a cb id (>= 0) or a negative kv_mtia_status. */
static inline int kv_mtia_cb_alloc(kv_mtia_device* d, int32_t slot_bytes, int32_t n_slots) {
  return d->api->cb_alloc(d, slot_bytes, n_slots);
}
/* Frees the front slot (after KV_CB_KEEP reads); runs on the CB's consumer engine. */
static inline int kv_mtia_cb_pop(kv_mtia_device* d, int32_t cb) { return d->api->cb_pop(d, cb); }

/* ---- DMA (fabric interface) ------------------------------------------- */
/* Rows land packed (row_bytes apart) in the back slot of cb. */
static inline int kv_mtia_dma_in(kv_mtia_device* d, int32_t cb, kv_mtia_view src) {
  return d->api->dma_in(d, cb, &src, 0);
}
/* Broadcast read: PEs of one column that issue the same view (their k-th
 * broadcast each) share one SRAM/DRAM read. */
static inline int kv_mtia_dma_in_bcast(kv_mtia_device* d, int32_t cb, kv_mtia_view src) {
  return d->api->dma_in(d, cb, &src, 1);
}
/* Writes the front slot (rows x row_bytes packed) to dst. */
static inline int kv_mtia_dma_out(kv_mtia_device* d, kv_mtia_view dst, int32_t cb, uint32_t flags) {
  return d->api->dma_out(d, &dst, cb, flags);
}
/* Indexed DMA: row idx[i] of table (table_rows rows, row_stride apart) for
 * i < n_idx, indices (KV_I32 or KV_I64) from the front slot of idx_cb,
 * rows landing packed (row_bytes apart). table must be aligned; row_stride
 * need not be (the engine fetches the granules that cover each row and is
 * charged for them). idx_flags: KV_CB_KEEP, KV_GATHER_ZERO_NEG. */
static inline int kv_mtia_dma_gather(kv_mtia_device* d, int32_t cb, uint64_t table, int64_t table_rows,
                                     int64_t row_bytes, int64_t row_stride, int32_t idx_cb, int32_t n_idx,
                                     int32_t idx_dtype, uint32_t idx_flags) {
  return d->api->dma_gather(d, cb, table, table_rows, row_bytes, row_stride, idx_cb, n_idx, idx_dtype, idx_flags);
}

/* ---- DPE and reduction engine ------------------------------------------ */
/* An fp32 accumulator tile in the RE; returns its id or a negative status. */
static inline int kv_mtia_acc_alloc(kv_mtia_device* d, int32_t rows, int32_t cols) {
  return d->api->acc_alloc(d, rows, cols);
}
/* Caches B (k x n, row-major, KV_F16 or KV_BF16) from the front slot of cb. */
static inline int kv_mtia_dpe_load_b(kv_mtia_device* d, int32_t cb, int32_t k, int32_t n, int32_t dtype,
                                     uint32_t flags) {
  return d->api->dpe_load_b(d, cb, k, n, dtype, flags);
}
/* acc (m x n) (+)= A (m x k, row stride lda elements, front slot of cb_a,
 * B's dtype) x cached B. flags: KV_MM_ZERO, KV_CB_KEEP. fp32 accumulation. */
static inline int kv_mtia_dpe_mm(kv_mtia_device* d, int32_t cb_a, int32_t m, int32_t k, int32_t lda, int32_t acc,
                                 uint32_t flags) {
  return d->api->dpe_mm(d, cb_a, m, k, lda, acc, flags);
}
/* acc -> cb_out in out_dtype, optionally through the SE on the way:
 * out = op(acc + bias), bias one row of n KV_F32 values in the front slot of
 * cb_bias (-1: no bias; se_op KV_OP_COPY: no activation). */
static inline int kv_mtia_re_drain(kv_mtia_device* d, int32_t acc, int32_t cb_out, int32_t out_dtype, int32_t se_op,
                                   int32_t cb_bias, uint32_t bias_flags) {
  return d->api->re_drain(d, acc, cb_out, out_dtype, se_op, cb_bias, bias_flags);
}
/* Forward acc to the neighbour PE in dir over the reduction network. */
static inline int kv_mtia_re_send(kv_mtia_device* d, int32_t acc, int32_t dir) { return d->api->re_send(d, acc, dir); }
/* Take the tile the neighbour in dir sent; add it to acc (add=1) or replace. */
static inline int kv_mtia_re_recv(kv_mtia_device* d, int32_t acc, int32_t dir, int32_t add) {
  return d->api->re_recv(d, acc, dir, add);
}
/* Per-row min and max of acc (rows x 2 fp32: min, max) into cb_out. */
static inline int kv_mtia_re_minmax(kv_mtia_device* d, int32_t acc, int32_t cb_out) {
  return d->api->re_minmax(d, acc, cb_out);
}

/* ---- SIMD engine and vector core --------------------------------------- */
/* Unary: out = op(a*x + b) over rows x cols. */
static inline int kv_mtia_se_unary(kv_mtia_device* d, int32_t op, int32_t cb_x, uint32_t x_flags, int32_t cb_out,
                                   int32_t rows, int32_t cols, int32_t in_dtype, int32_t out_dtype, float a, float b) {
  return d->api->elementwise(d, 0, op, cb_x, x_flags, -1, 0, 0, cb_out, rows, cols, in_dtype, out_dtype, a, b);
}
/* Binary: out = x op y, y laid out per y_bcast (y in_dtype too). Row
 * reductions (KV_OP_SUM, KV_OP_RMAX) take cb_y = -1 and write rows values. */
static inline int kv_mtia_se_binary(kv_mtia_device* d, int32_t op, int32_t cb_x, uint32_t x_flags, int32_t cb_y,
                                    uint32_t y_flags, int32_t y_bcast, int32_t cb_out, int32_t rows, int32_t cols,
                                    int32_t in_dtype, int32_t out_dtype) {
  return d->api->elementwise(d, 0, op, cb_x, x_flags, cb_y, y_flags, y_bcast, cb_out, rows, cols, in_dtype,
                             out_dtype, 1.0f, 0.0f);
}
/* Sum of up to 128 rows into one row, fp32 accumulation. */
static inline int kv_mtia_se_row_accum(kv_mtia_device* d, int32_t cb_in, uint32_t flags, int32_t rows, int32_t cols,
                                       int32_t in_dtype, int32_t cb_out, int32_t out_dtype) {
  return d->api->se_row_accum(d, cb_in, flags, rows, cols, in_dtype, cb_out, out_dtype);
}
/* The same operations on the RISC-V vector core (64 B per cycle), which also
 * has KV_OP_CUMSUM and KV_I32 data. */
static inline int kv_mtia_vec_op(kv_mtia_device* d, int32_t op, int32_t cb_x, uint32_t x_flags, int32_t cb_y,
                                 uint32_t y_flags, int32_t y_bcast, int32_t cb_out, int32_t rows, int32_t cols,
                                 int32_t in_dtype, int32_t out_dtype, float a, float b) {
  return d->api->elementwise(d, 1, op, cb_x, x_flags, cb_y, y_flags, y_bcast, cb_out, rows, cols, in_dtype,
                             out_dtype, a, b);
}

/* ---- memory layout unit ------------------------------------------------ */
static inline int kv_mtia_mlu_transpose(kv_mtia_device* d, int32_t cb_in, uint32_t flags, int32_t rows, int32_t cols,
                                        int32_t elem_bytes, int32_t cb_out) {
  return d->api->mlu_transpose(d, cb_in, flags, rows, cols, elem_bytes, cb_out);
}
/* Strided copy inside local memory: reshape, slice. */
static inline int kv_mtia_mlu_copy(kv_mtia_device* d, int32_t cb_in, uint32_t flags, int32_t in_offset, int32_t rows,
                                   int32_t row_bytes, int32_t in_stride, int32_t cb_out) {
  return d->api->mlu_copy(d, cb_in, flags, in_offset, rows, row_bytes, in_stride, cb_out);
}
/* Row-wise concatenation of two front slots. */
static inline int kv_mtia_mlu_concat(kv_mtia_device* d, int32_t cb_a, int32_t cb_b, uint32_t flags, int32_t rows,
                                     int32_t a_row_bytes, int32_t b_row_bytes, int32_t cb_out) {
  return d->api->mlu_concat(d, cb_a, cb_b, flags, rows, a_row_bytes, b_row_bytes, cb_out);
}

/* ---- integer ops, compares, local-memory gather (SE and vector core) ----
 * Flat vectors of n elements. engine_vec 0 runs on the SE, 1 on the vector
 * core; both do all of them (see knowledge/hardware/mtia2i/engines.md for
 * the rates: the SE has 32 lanes of 32 bits, so KV_I64 runs at half its
 * width; 64-bit multiplies and the remainder cost extra passes). */
typedef enum kv_mtia_iop {
  KV_IOP_ADD = 0,    /* x + y, wrapping (two's complement) */
  KV_IOP_SUB = 1,    /* x - y, wrapping */
  KV_IOP_MUL = 2,    /* low half of x * y (same bits signed or unsigned) */
  KV_IOP_MULHI_U = 3, /* high half of the unsigned double-width product */
  KV_IOP_AND = 4,
  KV_IOP_OR = 5,
  KV_IOP_XOR = 6,
  KV_IOP_SHL = 7,    /* x << (y mod bit width) */
  KV_IOP_SHR_U = 8,  /* logical x >> (y mod bit width) */
  KV_IOP_REM_U = 9,  /* unsigned x mod y; y = 0 fails with KV_MTIA_ERR_ARG */
  KV_IOP_GE_U = 10,  /* 1 where unsigned x >= y, else 0 */
  KV_IOP_ADD_IF = 11, /* x + (y != 0 ? imm : 0): y is a mask, imm the step */
  KV_IOP_MIN = 12    /* signed min */
} kv_mtia_iop;

/* Compares: 1 or 0 as KV_I32. */
typedef enum kv_mtia_cmp_op { KV_CMP_LT = 0, KV_CMP_LE = 1, KV_CMP_EQ = 2 } kv_mtia_cmp_op;

/* out = x op y over n elements of dtype (KV_I32 or KV_I64). cb_y = -1 uses
 * the immediate imm (its low 32 bits for KV_I32) for every y, except for
 * KV_IOP_ADD_IF, which needs the mask buffer cb_y and takes the step from imm.
 * Buffers hold raw bytes: any n*4 (n*8) bytes may be read as integers. */
static inline int kv_mtia_int_op(kv_mtia_device* d, int32_t engine_vec, int32_t op, int32_t cb_x, uint32_t x_flags,
                                 int32_t cb_y, uint32_t y_flags, int32_t cb_out, int32_t n, int32_t dtype,
                                 uint64_t imm) {
  return d->api->int_op(d, engine_vec, op, cb_x, x_flags, cb_y, y_flags, cb_out, n, dtype, imm);
}
/* out[i] = (x[i] cmp y[i]) ? 1 : 0 as KV_I32; x, y of in_dtype (KV_F32,
 * KV_F16, KV_BF16 compare as floats, NaN compares false; KV_I32, KV_I64
 * signed). */
static inline int kv_mtia_cmp(kv_mtia_device* d, int32_t engine_vec, int32_t cmp, int32_t cb_x, uint32_t x_flags,
                              int32_t cb_y, uint32_t y_flags, int32_t cb_out, int32_t n, int32_t in_dtype) {
  return d->api->cmp(d, engine_vec, cmp, cb_x, x_flags, cb_y, y_flags, cb_out, n, in_dtype);
}
/* Vector gather from local memory: out[i] = table[idx[i] + offset] for
 * i < n, table = table_elems elements of dtype (4 or 8 bytes: KV_F32,
 * KV_I32, KV_I64) in the front slot of cb_table (KV_CB_KEEP keeps it for the
 * next gather), idx KV_I32 in the front slot of cb_idx. An index outside
 * [0, table_elems) fails with KV_MTIA_ERR_ADDRESS: nothing past the table is
 * readable. The binary-search step of bucketize:
 *   g = table[pos + step - 1]; m = g < x; pos = pos + (m ? step : 0). */
static inline int kv_mtia_lm_gather(kv_mtia_device* d, int32_t engine_vec, int32_t cb_table, uint32_t table_flags,
                                    int32_t table_elems, int32_t dtype, int32_t cb_idx, uint32_t idx_flags,
                                    int32_t cb_out, int32_t n, int32_t offset) {
  return d->api->lm_gather(d, engine_vec, cb_table, table_flags, table_elems, dtype, cb_idx, idx_flags, cb_out, n,
                           offset);
}

/* ---- scalar core on local memory, segments (gather/segment class) ------
 * Data-dependent control flow: the program (the PE's scalar core) may read
 * integers that a DMA or an engine put into a CB, and decide from them what
 * to issue next (how many indices to gather, where a sequence starts). The
 * scalar core is in order: a peek waits until the slot's producer has
 * finished, then costs sc_load_cycles; every command after it issues later.
 * Prefetch metadata (DMA the offsets of the next block before working on the
 * current one) so the wait overlaps useful work. A peek reads only bytes the
 * slot's producer wrote (else KV_MTIA_ERR_ARG), never a foreign or stale
 * buffer. Host arithmetic on peeked values is free, but every value costs a
 * peek: use it for metadata, not for data. */

/* *value = element `index` (KV_I32 or KV_I64) of the front slot of cb
 * (0 when the call fails).
 * flags KV_CB_KEEP leaves the slot (the CB's engine consumer, or a later
 * peek, frees it); KV_CB_POP frees it (the scalar core is then the CB's
 * consumer). */
static inline int kv_mtia_sc_peek_int(kv_mtia_device* d, int32_t cb, int32_t dtype, int64_t index, uint32_t flags,
                                      int64_t* value) {
  return d->api->sc_peek_int(d, cb, dtype, index, flags, value);
}
/* The scalar core writes n integers (KV_I32 or KV_I64, from host values) into
 * the back slot of cb and pushes it: sc_store_cycles per value, after the
 * slot is free. For metadata the program computed: gather indices, output
 * offsets, counts to exchange through device memory. */
static inline int kv_mtia_sc_push_int(kv_mtia_device* d, int32_t cb, int32_t dtype, const int64_t* values, int32_t n) {
  return d->api->sc_push_int(d, cb, dtype, values, n);
}
/* The SE writes rows x cols copies of value (KV_F32, KV_F16 or KV_BF16) into
 * the back slot of cb_out, at the SE rate: zero padding, constants. */
static inline int kv_mtia_se_fill(kv_mtia_device* d, int32_t cb_out, int32_t rows, int32_t cols, int32_t dtype,
                                  float value) {
  return d->api->se_fill(d, cb_out, rows, cols, dtype, value);
}
/* Segmented row-accumulate on the RE: rows x cols values (in_dtype, packed,
 * the front slot of cb_rows, e.g. from kv_mtia_dma_gather) are rows at
 * positions row_base .. row_base + rows - 1; acc row s (fp32) += every row
 * whose position lies in segment s of seg (rows outside all segments are
 * skipped). acc_flags KV_MM_ZERO zeroes acc first. acc needs >= seg->count
 * rows of cols. Cost: rows*cols fp32 values at re_bytes_per_cycle plus
 * re_segment_cycles per segment. Drain with kv_mtia_re_drain. A bag that
 * spans several gathers accumulates across calls (no KV_MM_ZERO). */
static inline int kv_mtia_re_segment_sum(kv_mtia_device* d, int32_t cb_rows, uint32_t rows_flags, int32_t rows,
                                         int32_t cols, int32_t in_dtype, int64_t row_base,
                                         const kv_mtia_segments* seg, int32_t acc, uint32_t acc_flags) {
  return d->api->re_segment_sum(d, cb_rows, rows_flags, rows, cols, in_dtype, row_base, seg, acc, acc_flags);
}

/* ---- float-to-integer conversion (SE and vector core) --------------------
 * out[i] = clamp(floor(a * x[i] + b), lo, hi) as KV_I32 over n elements of
 * in_dtype (KV_F32, KV_F16, KV_BF16); a * x + b is computed in fp32 with two
 * roundings (no fused multiply-add), a NaN gives lo, -inf lo and +inf hi.
 * a and b must be finite. For a >= 0 the result never decreases as x grows,
 * so a table indexed by it (the cell of a grid index over sorted values, a
 * histogram bin) is consistent for any input. Cost: one SE pass (engine_vec
 * 0) or one fp32 vector-core element op (engine_vec 1). */
static inline int kv_mtia_cvt_f2i(kv_mtia_device* d, int32_t engine_vec, int32_t cb_x, uint32_t x_flags,
                                  int32_t cb_out, int32_t n, int32_t in_dtype, float a, float b, int32_t lo,
                                  int32_t hi) {
  return d->api->cvt_f2i(d, engine_vec, cb_x, x_flags, cb_out, n, in_dtype, a, b, lo, hi);
}

/* ---- packing into a staging slot (MLU) ----------------------------------
 * A rows x cols matrix (row stride ld elements of elem_bytes 2 or 4) in the
 * front slot of cb_in, packed row after row, or with lower = 1 the strictly
 * lower triangle of a square one (row i: its first i elements, n(n-1)/2 in
 * all), is written as part `part` of the back slot of cb_out, at element
 * part * (size of one part). The slot collects `parts` of them, written in
 * order 0 .. parts-1, and is pushed by the last, so pieces whose sizes are not
 * 32-byte multiples (dot_interaction's F(F-1)/2 values per sample, a
 * convolution's Cout x Lout block) leave in one aligned DMA. The slot it
 * fills must be free (popped in program order) at part 0. Cost: bytes
 * written / 64 MLU cycles. */
static inline int kv_mtia_mlu_pack(kv_mtia_device* d, int32_t cb_in, uint32_t in_flags, int32_t rows, int32_t cols,
                                   int32_t ld, int32_t elem_bytes, int32_t cb_out, int32_t part, int32_t parts) {
  return d->api->mlu_pack(d, cb_in, in_flags, rows, cols, ld, elem_bytes, 0, cb_out, part, parts);
}
static inline int kv_mtia_mlu_tril(kv_mtia_device* d, int32_t cb_in, uint32_t in_flags, int32_t n, int32_t ld,
                                   int32_t elem_bytes, int32_t cb_out, int32_t part, int32_t parts) {
  return d->api->mlu_pack(d, cb_in, in_flags, n, n, ld, elem_bytes, 1, cb_out, part, parts);
}

/* Device address of a kv_args tensor, and a view of rows of it. */
static inline uint64_t kv_mtia_addr(const kv_tensor* t) { return (uint64_t)(uintptr_t)t->data; }
static inline kv_mtia_view kv_mtia_rows(uint64_t addr, int64_t rows, int64_t row_bytes, int64_t stride_bytes) {
  kv_mtia_view v;
  v.addr = addr;
  v.rows = rows;
  v.row_bytes = row_bytes;
  v.stride_bytes = stride_bytes;
  return v;
}

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* KEVOLVE_MTIA_H */
