// GEMM kernels written against <kevolve/mtia.h> exactly as mtia_emu
// candidates are: C[M,N] (fp16) = A[M,K] (fp16) x B[K,N] (fp16), fp32
// accumulation. The PE grid tiles C: grid row r owns M/R rows, grid column c
// owns a 16-element-granule share of N. Tile sizes come in as params.
#pragma once

#include "kevolve/abi.h"
#include "kevolve/mtia.h"

namespace kevolve::emu::mtia::testing {

struct gemm_cfg {
  uint64_t a, b, c;
  int32_t m, n, k;
  int32_t mb, nb, kb;  // A tile mb x kb, B tile kb x nb
  int32_t slots;       // CB depth: 1 = no double buffering
  int32_t bcast;       // B tiles by broadcast read across the PE column
  int32_t resident_a;  // A block kept in local memory (one CB per k block; needs mb == M / grid rows)
  int32_t redundant;   // load every B tile twice (a command that cannot help)
};

// [n0, n1) of column c among cols, in 16-element granules (32-byte aligned for fp16).
inline void column_range(int32_t n, int32_t c, int32_t cols, int32_t* n0, int32_t* n1) {
  const int32_t g = (n + 15) / 16;
  *n0 = static_cast<int32_t>(int64_t(g) * c / cols) * 16;
  *n1 = static_cast<int32_t>(int64_t(g) * (c + 1) / cols) * 16;
  if (*n1 > n) *n1 = n;
}

inline void gemm_program(kv_mtia_device* d, const void* user) {
  const gemm_cfg& g = *static_cast<const gemm_cfg*>(user);
  const int32_t rows = kv_mtia_grid_rows(d), cols = kv_mtia_grid_cols(d);
  const int32_t pid = kv_mtia_program_id(d);
  const int32_t r = pid / cols, c = pid % cols;
  const int32_t mp = g.m / rows, m0 = r * mp;
  int32_t n0, n1;
  column_range(g.n, c, cols, &n0, &n1);
  const int32_t tiles_m = mp / g.mb;
  const int32_t nkb = (g.k + g.kb - 1) / g.kb;
  const int cb_b = kv_mtia_cb_alloc(d, g.kb * g.nb * 2, g.slots);
  const int cb_c = kv_mtia_cb_alloc(d, g.mb * g.nb * 2, 2);
  int cb_a[32];
  if (g.resident_a) {
    for (int32_t kb = 0; kb < nkb; ++kb) {
      cb_a[kb] = kv_mtia_cb_alloc(d, g.mb * g.kb * 2, 1);
      kv_mtia_dma_in(d, cb_a[kb], kv_mtia_rows(g.a + (uint64_t(m0) * g.k + uint64_t(kb) * g.kb) * 2, g.mb,
                                               int64_t(g.kb) * 2, int64_t(g.k) * 2));
    }
  } else {
    cb_a[0] = kv_mtia_cb_alloc(d, g.mb * g.kb * 2, g.slots);
  }
  int acc[8], acc_tail[8];
  for (int32_t i = 0; i < tiles_m; ++i) acc[i] = kv_mtia_acc_alloc(d, g.mb, g.nb);
  const int32_t tail = (n1 - n0) % g.nb;
  for (int32_t i = 0; i < tiles_m && tail; ++i) acc_tail[i] = kv_mtia_acc_alloc(d, g.mb, tail);
  for (int32_t n = n0; n < n1; n += g.nb) {
    const int32_t nn = n1 - n < g.nb ? n1 - n : g.nb;
    const int* accs = nn == g.nb ? acc : acc_tail;
    for (int32_t kb = 0; kb < nkb; ++kb) {
      const int32_t k = kb * g.kb, kk = g.k - k < g.kb ? g.k - k : g.kb;
      const kv_mtia_view bv = kv_mtia_rows(g.b + (uint64_t(k) * g.n + n) * 2, kk, int64_t(nn) * 2, int64_t(g.n) * 2);
      if (g.bcast) kv_mtia_dma_in_bcast(d, cb_b, bv);
      else kv_mtia_dma_in(d, cb_b, bv);
      if (g.redundant) {
        if (g.bcast) kv_mtia_dma_in_bcast(d, cb_b, bv);
        else kv_mtia_dma_in(d, cb_b, bv);
        kv_mtia_dpe_load_b(d, cb_b, kk, nn, KV_F16, KV_CB_POP);
      }
      kv_mtia_dpe_load_b(d, cb_b, kk, nn, KV_F16, KV_CB_POP);
      for (int32_t i = 0; i < tiles_m; ++i) {
        const uint32_t zero = kb == 0 ? KV_MM_ZERO : 0u;
        if (g.resident_a) {
          kv_mtia_dpe_mm(d, cb_a[kb], g.mb, kk, g.kb, accs[i], zero | KV_CB_KEEP);
        } else {
          kv_mtia_dma_in(d, cb_a[0], kv_mtia_rows(g.a + (uint64_t(m0 + i * g.mb) * g.k + k) * 2, g.mb,
                                                  int64_t(kk) * 2, int64_t(g.k) * 2));
          kv_mtia_dpe_mm(d, cb_a[0], g.mb, kk, kk, accs[i], zero);
        }
      }
    }
    for (int32_t i = 0; i < tiles_m; ++i) {
      kv_mtia_re_drain(d, accs[i], cb_c, KV_F16, KV_OP_COPY, -1, 0);
      kv_mtia_dma_out(d, kv_mtia_rows(g.c + (uint64_t(m0 + i * g.mb) * g.n + n) * 2, g.mb, int64_t(nn) * 2,
                                      int64_t(g.n) * 2),
                      cb_c, KV_CB_POP);
    }
  }
}

// The candidate-style entry: inputs A, B; output C; params mb, nb, kb, slots, bcast, resident_a
// and optionally redundant.
inline int gemm_kernel(const kv_args* args, kv_mtia_device* dev) {
  gemm_cfg g;
  g.a = kv_mtia_addr(&args->inputs[0]);
  g.b = kv_mtia_addr(&args->inputs[1]);
  g.c = kv_mtia_addr(&args->outputs[0]);
  g.m = static_cast<int32_t>(args->inputs[0].dims[0]);
  g.k = static_cast<int32_t>(args->inputs[0].dims[1]);
  g.n = static_cast<int32_t>(args->inputs[1].dims[1]);
  g.mb = static_cast<int32_t>(kv_param_i(args, 0));
  g.nb = static_cast<int32_t>(kv_param_i(args, 1));
  g.kb = static_cast<int32_t>(kv_param_i(args, 2));
  g.slots = static_cast<int32_t>(kv_param_i(args, 3));
  g.bcast = static_cast<int32_t>(kv_param_i(args, 4));
  g.resident_a = static_cast<int32_t>(kv_param_i(args, 5));
  g.redundant = args->num_params > 6 ? static_cast<int32_t>(kv_param_i(args, 6)) : 0;
  const int32_t pes = kv_mtia_grid_rows(dev) * kv_mtia_grid_cols(dev);
  if (g.m % kv_mtia_grid_rows(dev) != 0 || (g.m / kv_mtia_grid_rows(dev)) % g.mb != 0) return KV_ERR_UNSUPPORTED;
  return kv_mtia_launch(dev, pes, gemm_program, &g);
}

}  // namespace kevolve::emu::mtia::testing
