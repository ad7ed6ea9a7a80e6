// knowledge/examples/mtia_emu/gemm_bias_relu.cpp: an honest mtia_emu kernel of gemm_bias_relu (bf16;
// kevolve eval --backend mtia_emu --variant bf16). knowledge/templates/mtia_emu/gemm_bias_relu.cpp.tmpl
// with the parameters below: 128 x 128 x 256 DPE tiles, B broadcast across PE columns, double-buffered
// CBs, bias + ReLU fused into the RE drain.
#define KVP_MB 128
#define KVP_NB 128
#define KVP_KB 256
#define KVP_SLOTS 2
#define KVP_BCAST 1
#define KVP_RESIDENT_A 0
#define KVP_FUSE 1
#define KVP_GRID_ROWS 0
// GEMM + bias + ReLU on the MTIA-like emulator: C = relu(A x B + bias), A [M, K],
// B [K, N], C [M, N] in fp16/bf16 (the DPE's types), fp32 accumulation in the RE.
// Aligned path (K and N multiples of 16 elements, so every DMA is 32-byte
// aligned): grid row r owns a band of mb-row tiles of M, grid column c a
// 16-element-granule share of N. Per group of up to T m-tiles (as many fp32
// accumulators as the RE holds), each B tile (kb x nb) is loaded once into the
// B-cache and multiplied with the T A tiles. KVP_BCAST: B tiles by broadcast
// read across the PE column (one SRAM read for the 8 PEs of a column);
// KVP_SLOTS CB slots per stage (1: no overlap of DMA and compute);
// KVP_RESIDENT_A: a group's A blocks stay in local memory across its n tiles;
// KVP_FUSE: bias + ReLU in the RE drain through the SE (else three passes:
// drain, SE add, SE ReLU). Shapes that break the alignment take a plain path:
// 16-row bands of A and full-width B blocks loaded flat, k blocks cut by the MLU.
#include <stdint.h>

#include <kevolve/abi.h>
#include <kevolve/mtia.h>

namespace {

struct cfg {
  uint64_t a, b, bias, c;
  int32_t m, n, k, dtype;
  int32_t mb, nb, kb, slots, bcast, resident, fuse;
  int32_t grid_rows, grid_cols;  // the logical grid of programs over M x N
};

int32_t min32(int32_t x, int32_t y) { return x < y ? x : y; }

// [n0, n1) of column c among cols, in 16-element granules (32-byte aligned).
void column_range(int32_t n, int32_t c, int32_t cols, int32_t* n0, int32_t* n1) {
  const int32_t g = (n + 15) / 16;
  *n0 = int32_t(int64_t(g) * c / cols) * 16;
  *n1 = min32(int32_t(int64_t(g) * (c + 1) / cols) * 16, n);
}

// The bias slice [n0, n0 + w) as one fp32 row in cb_bias (consumer: RE when fused, else SE).
void load_bias(kv_mtia_device* d, const cfg& g, int cb_raw, int cb_bias, int32_t n0, int32_t w) {
  kv_mtia_dma_in(d, cb_raw, kv_mtia_rows(g.bias + uint64_t(n0) * 2, 1, int64_t(w) * 2, int64_t(w) * 2));
  kv_mtia_se_unary(d, KV_OP_COPY, cb_raw, KV_CB_POP, cb_bias, 1, w, g.dtype, KV_F32, 1.0f, 0.0f);
}

struct epilogue {
  int cb_c, cb_t, cb_u;
};

epilogue alloc_epilogue(kv_mtia_device* d, const cfg& g, int32_t rows, int32_t cols) {
  epilogue e;
  e.cb_c = kv_mtia_cb_alloc(d, rows * cols * 2, 2);
  e.cb_t = g.fuse ? -1 : kv_mtia_cb_alloc(d, rows * cols * 4, 1);
  e.cb_u = g.fuse ? -1 : kv_mtia_cb_alloc(d, rows * cols * 4, 1);
  return e;
}

// acc (rows x cols) -> relu(acc + bias[n - n_bias0 ...]) -> C at (m, n).
// bias_flags: KV_CB_POP on the last tile that uses this bias slice.
void drain(kv_mtia_device* d, const cfg& g, const epilogue& e, int acc, int cb_bias, uint32_t bias_flags, int32_t m,
           int32_t rows, int32_t n, int32_t cols) {
  if (g.fuse) {
    kv_mtia_re_drain(d, acc, e.cb_c, g.dtype, KV_OP_RELU, cb_bias, bias_flags);
  } else {
    kv_mtia_re_drain(d, acc, e.cb_t, KV_F32, KV_OP_COPY, -1, 0);
    kv_mtia_se_binary(d, KV_OP_ADD, e.cb_t, KV_CB_POP, cb_bias, bias_flags, KV_Y_ROW, e.cb_u, rows, cols, KV_F32, KV_F32);
    kv_mtia_se_unary(d, KV_OP_RELU, e.cb_u, KV_CB_POP, e.cb_c, rows, cols, KV_F32, g.dtype, 1.0f, 0.0f);
  }
  kv_mtia_dma_out(d, kv_mtia_rows(g.c + (uint64_t(m) * g.n + n) * 2, rows, int64_t(cols) * 2, int64_t(g.n) * 2), e.cb_c,
                  KV_CB_POP);
}

void tiled_program(kv_mtia_device* d, const void* user) {
  const cfg& g = *static_cast<const cfg*>(user);
  const int32_t rows = g.grid_rows, cols = g.grid_cols;
  const int32_t pid = kv_mtia_program_id(d), r = pid / cols, c = pid % cols;
  const int32_t tiles = (g.m + g.mb - 1) / g.mb;
  const int32_t t0 = int32_t(int64_t(tiles) * r / rows), t1 = int32_t(int64_t(tiles) * (r + 1) / rows);
  int32_t n0, n1;
  column_range(g.n, c, cols, &n0, &n1);
  if (t0 >= t1 || n0 >= n1) return;
  const int32_t w = n1 - n0, nb = min32(g.nb, w), tail = w % nb;
  const int32_t nkb = (g.k + g.kb - 1) / g.kb;
  // Accumulators: T full m-tiles (x a full and a tail n width), plus the short last tile of M.
  const int32_t short_rows = g.m % g.mb;
  const int32_t per_tile = nb + tail;
  int32_t cap = 32768 - (short_rows ? short_rows * per_tile : 0);
  int32_t T = cap / (g.mb * per_tile);
  if (T < 1) T = 1;  // the launcher keeps one tile within the RE
  if (T > t1 - t0) T = t1 - t0;
  if (T > 8) T = 8;
  // Resident A: the group's A blocks (T x nkb CBs) stay while its n tiles pass.
  const int64_t ls = kv_mtia_query(d, KV_MTIA_Q_LS_BYTES) - 16384;
  const int64_t rest = int64_t(g.slots) * g.kb * nb * 2 + 2LL * g.mb * nb * 2 + (g.fuse ? 0 : 2LL * g.mb * nb * 4) +
                       int64_t(w) * 6;
  const bool resident = g.resident && T * nkb <= 16 && int64_t(T) * nkb * g.mb * g.kb * 2 + rest <= ls;
  // One bias slice per n tile, loaded ahead of its k loop.
  const int cb_bias_raw = kv_mtia_cb_alloc(d, nb * 2, 2);
  const int cb_bias = kv_mtia_cb_alloc(d, nb * 4, 2);
  const int cb_b = kv_mtia_cb_alloc(d, g.kb * nb * 2, g.slots);
  int cb_a[16];
  if (resident)
    for (int32_t i = 0; i < T * nkb; ++i) cb_a[i] = kv_mtia_cb_alloc(d, g.mb * g.kb * 2, 1);
  else
    cb_a[0] = kv_mtia_cb_alloc(d, g.mb * g.kb * 2, g.slots);
  const epilogue e = alloc_epilogue(d, g, g.mb, nb);
  int acc[8], acc_t[8], acc_s = -1, acc_st = -1;
  for (int32_t i = 0; i < T; ++i) {
    acc[i] = kv_mtia_acc_alloc(d, g.mb, nb);
    acc_t[i] = tail ? kv_mtia_acc_alloc(d, g.mb, tail) : -1;
  }
  if (short_rows && t1 == tiles) {
    acc_s = kv_mtia_acc_alloc(d, short_rows, nb);
    acc_st = tail ? kv_mtia_acc_alloc(d, short_rows, tail) : -1;
  }
  for (int32_t tg = t0; tg < t1; tg += T) {
    const int32_t nt = min32(T, t1 - tg);
    for (int32_t n = n0; n < n1; n += nb) {
      const int32_t nn = min32(nb, n1 - n);
      load_bias(d, g, cb_bias_raw, cb_bias, n, nn);
      for (int32_t kb = 0; kb < nkb; ++kb) {
        const int32_t k = kb * g.kb, kk = min32(g.kb, g.k - k);
        const kv_mtia_view bv = kv_mtia_rows(g.b + (uint64_t(k) * g.n + n) * 2, kk, int64_t(nn) * 2, int64_t(g.n) * 2);
        if (g.bcast) kv_mtia_dma_in_bcast(d, cb_b, bv);
        else kv_mtia_dma_in(d, cb_b, bv);
        kv_mtia_dpe_load_b(d, cb_b, kk, nn, g.dtype, KV_CB_POP);
        for (int32_t i = 0; i < nt; ++i) {
          const int32_t m = (tg + i) * g.mb, mm = min32(g.mb, g.m - m);
          const int a_acc = mm < g.mb ? (nn == nb ? acc_s : acc_st) : (nn == nb ? acc[i] : acc_t[i]);
          const uint32_t zero = kb == 0 ? KV_MM_ZERO : 0u;
          const kv_mtia_view av = kv_mtia_rows(g.a + (uint64_t(m) * g.k + k) * 2, mm, int64_t(kk) * 2, int64_t(g.k) * 2);
          if (resident) {
            const int cb = cb_a[i * nkb + kb];
            if (n == n0) kv_mtia_dma_in(d, cb, av);
            const bool last = n + nb >= n1;
            kv_mtia_dpe_mm(d, cb, mm, kk, kk, a_acc, zero | (last ? KV_CB_POP : KV_CB_KEEP));
          } else {
            kv_mtia_dma_in(d, cb_a[0], av);
            kv_mtia_dpe_mm(d, cb_a[0], mm, kk, kk, a_acc, zero);
          }
        }
      }
      for (int32_t i = 0; i < nt; ++i) {
        const int32_t m = (tg + i) * g.mb, mm = min32(g.mb, g.m - m);
        const int a_acc = mm < g.mb ? (nn == nb ? acc_s : acc_st) : (nn == nb ? acc[i] : acc_t[i]);
        drain(d, g, e, a_acc, cb_bias, i + 1 == nt ? KV_CB_POP : KV_CB_KEEP, m, mm, n, nn);  // a slot holds any smaller tile
      }
    }
  }
}

// Logical grid rows for M x N on pes programs: the split that minimises the
// bytes each PE takes in (its rows of A plus its columns of B).
int32_t auto_grid_rows(const cfg& g, int32_t pes) {
  int32_t best = 1;
  int64_t best_in = -1;
  for (int32_t gr = 1; gr <= pes; gr *= 2) {
    if (pes % gr) continue;
    const int64_t gc = pes / gr;
    const int64_t rows = (g.m + gr - 1) / gr, ncols = ((g.n + 15) / 16 + gc - 1) / gc * 16;
    const int64_t in = rows + ncols;
    if (best_in < 0 || in < best_in) best_in = in, best = gr;
  }
  return best;
}

// Unaligned shapes: 16-row bands of A (flat, full K), B in full-width blocks of
// kb rows (flat), the k block of A cut out by the MLU; program p takes bands
// p, p + P, ...
void flat_program(kv_mtia_device* d, const void* user) {
  const cfg& g = *static_cast<const cfg*>(user);
  const int32_t pid = kv_mtia_program_id(d), np = kv_mtia_num_programs(d);
  const int32_t bands = (g.m + 15) / 16;
  if (pid >= bands) return;
  int32_t kb = g.kb - g.kb % 16;
  while (kb > 16 && int64_t(kb) * g.n * 2 > 65536) kb -= 16;
  const int32_t nkb = (g.k + kb - 1) / kb;
  const int cb_bias = kv_mtia_cb_alloc(d, g.n * 4, 1);
  load_bias(d, g, kv_mtia_cb_alloc(d, g.n * 2, 1), cb_bias, 0, g.n);
  const int cb_a = kv_mtia_cb_alloc(d, 16 * g.k * 2, 1);
  const int cb_ak = kv_mtia_cb_alloc(d, 16 * kb * 2, g.slots);
  const int cb_b = kv_mtia_cb_alloc(d, kb * g.n * 2, g.slots);
  const epilogue e = alloc_epilogue(d, g, 16, g.n);
  const int32_t last_rows = g.m - (bands - 1) * 16;
  const int acc = kv_mtia_acc_alloc(d, 16, g.n);
  const int acc_l = last_rows < 16 ? kv_mtia_acc_alloc(d, last_rows, g.n) : acc;
  for (int32_t band = pid; band < bands; band += np) {
    const int32_t m = band * 16, mm = min32(16, g.m - m);
    const int a = mm == 16 ? acc : acc_l;
    kv_mtia_dma_in(d, cb_a, kv_mtia_rows(g.a + uint64_t(m) * g.k * 2, 1, int64_t(mm) * g.k * 2, int64_t(mm) * g.k * 2));
    for (int32_t b = 0; b < nkb; ++b) {
      const int32_t k = b * kb, kk = min32(kb, g.k - k);
      const int64_t bytes = int64_t(kk) * g.n * 2;
      kv_mtia_dma_in(d, cb_b, kv_mtia_rows(g.b + uint64_t(k) * g.n * 2, 1, bytes, bytes));
      kv_mtia_dpe_load_b(d, cb_b, kk, g.n, g.dtype, KV_CB_POP);
      kv_mtia_mlu_copy(d, cb_a, b + 1 == nkb ? KV_CB_POP : KV_CB_KEEP, k * 2, mm, kk * 2, g.k * 2, cb_ak);
      kv_mtia_dpe_mm(d, cb_ak, mm, kk, kk, a, b == 0 ? KV_MM_ZERO : 0u);
    }
    const epilogue& ep = e;  // a slot holds the shorter last band too
    if (g.fuse) {
      kv_mtia_re_drain(d, a, ep.cb_c, g.dtype, KV_OP_RELU, cb_bias, KV_CB_KEEP);
    } else {
      kv_mtia_re_drain(d, a, ep.cb_t, KV_F32, KV_OP_COPY, -1, 0);
      kv_mtia_se_binary(d, KV_OP_ADD, ep.cb_t, KV_CB_POP, cb_bias, KV_CB_KEEP, KV_Y_ROW, ep.cb_u, mm, g.n, KV_F32, KV_F32);
      kv_mtia_se_unary(d, KV_OP_RELU, ep.cb_u, KV_CB_POP, ep.cb_c, mm, g.n, KV_F32, g.dtype, 1.0f, 0.0f);
    }
    const int64_t out = int64_t(mm) * g.n * 2;
    kv_mtia_dma_out(d, kv_mtia_rows(g.c + uint64_t(m) * g.n * 2, 1, out, out), ep.cb_c, KV_CB_POP);
  }
}

}  // namespace

extern "C" int kevolve_kernel(const kv_args* args, kv_mtia_device* dev) {
  cfg g;
  const kv_tensor& A = args->inputs[0];
  g.a = kv_mtia_addr(&A);
  g.b = kv_mtia_addr(&args->inputs[1]);
  g.bias = kv_mtia_addr(&args->inputs[2]);
  g.c = kv_mtia_addr(&args->outputs[0]);
  g.dtype = A.dtype;
  if (g.dtype != KV_F16 && g.dtype != KV_BF16) return KV_ERR_UNSUPPORTED;  // the DPE multiplies 16-bit floats only
  g.m = int32_t(A.dims[0]);
  g.k = int32_t(A.dims[1]);
  g.n = int32_t(args->inputs[1].dims[1]);
  g.mb = KVP_MB;
  g.nb = KVP_NB;
  g.kb = KVP_KB;
  g.slots = KVP_SLOTS;
  g.bcast = KVP_BCAST;
  g.resident = KVP_RESIDENT_A;
  g.fuse = KVP_FUSE;
  const int32_t pes = kv_mtia_grid_rows(dev) * kv_mtia_grid_cols(dev);
  g.grid_rows = KVP_GRID_ROWS > 0 ? KVP_GRID_ROWS : auto_grid_rows(g, pes);  // 0: auto
  if (g.grid_rows > pes || pes % g.grid_rows) g.grid_rows = kv_mtia_grid_rows(dev);
  g.grid_cols = pes / g.grid_rows;
  const int64_t ls = kv_mtia_query(dev, KV_MTIA_Q_LS_BYTES) - 16384;
  if (g.k % 16 || g.n % 16) {
    // Flat path: B blocks of full width must fit the B-cache; the output row the accumulator.
    if (int64_t(16) * g.n * 2 > 65536 || int64_t(16) * g.n > 32768 / 2) return KV_ERR_UNSUPPORTED;
    if (g.slots > 2) g.slots = 2;
    while (g.slots > 1 && 16LL * g.k * 2 + g.slots * (16LL * g.kb * 2 + int64_t(g.kb) * g.n * 2) + 64LL * g.n * 6 > ls)
      --g.slots;
    return kv_mtia_launch(dev, pes, flat_program, &g);
  }
  // Accumulators of one m tile (full and tail widths) plus the short last m
  // tile within the RE (32768 fp32); the widest column share decides.
  {
    const int32_t gc = g.grid_cols, share = ((g.n + 15) / 16 + gc - 1) / gc * 16;
    for (;;) {
      const int32_t nb = min32(g.nb, share), per_tile = nb + share % nb;
      if (int64_t(g.mb + g.m % g.mb) * per_tile <= 32768) break;
      if (g.nb > 32) g.nb /= 2;
      else if (g.mb > 16) g.mb /= 2;
      else return KV_ERR_UNSUPPORTED;
    }
  }
  // B tile within the B-cache (64 KiB).
  while (int64_t(g.kb) * g.nb * 2 > 65536 && g.kb > 16) g.kb /= 2;
  // Local memory: B and A stages, the output stages, the bias; fewer slots if short.
  for (;;) {
    const int64_t a_bytes = int64_t(g.slots) * g.mb * g.kb * 2;  // resident A: checked per program
    const int64_t need = int64_t(g.slots) * g.kb * g.nb * 2 + a_bytes + 2LL * g.mb * g.nb * 2 +
                         (g.fuse ? 0 : 2LL * g.mb * g.nb * 4) + int64_t(g.n) * 6;
    if (need <= ls) break;
    if (g.slots > 1) --g.slots;
    else if (g.kb > 32) g.kb /= 2;
    else return KV_ERR_UNSUPPORTED;
  }
  return kv_mtia_launch(dev, pes, tiled_program, &g);
}
