// Example kernel: gemm_bias_relu (fp32), C = max(0, A @ B + bias).
//
// A BLIS-style GEMM written from scratch (no BLAS):
//   * both operands are packed at the start of the call, by all threads, into
//     args->workspace: B into KC x NR micro-panels (K-blocked by KC), A into
//     MR-row micro-panels; one barrier; packing is O(MK + KN) next to the
//     O(MNK) product;
//   * each thread then owns a contiguous range of MR-row panels of C (or also
//     a range of NR-column panels when M is too small) and walks it K block by
//     K block: for an MC-row block of A (kept in L2), every B micro-panel is
//     used against all MC/MR A micro-panels before moving on;
//   * the micro-kernel keeps an MR x NR tile of C in registers (14 x 32 floats =
//     28 zmm accumulators with AVX-512), broadcasts A and loads B;
//   * the epilogue of the last K block adds the bias and applies ReLU while the
//     tile is still in registers; masked loads/stores handle the N tail, the
//     zero-padded A panel the M tail.
// Nothing is allocated. Without AVX-512 a portable micro-kernel with the same
// packing is used (correct, not tuned).
#include <omp.h>
#include <cstdint>
#include "kevolve/abi.h"
#ifdef __AVX512F__
#pragma GCC diagnostic push
// gcc 12's own intrinsic headers trip -Wmaybe-uninitialized (gcc PR 105593).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop
#endif

namespace {

constexpr int MR = 14;          // rows of the register tile
constexpr int NR = 32;          // columns of the register tile (two zmm)
// K block: deep blocks mean fewer read-modify-write passes over C. Measured on
// Zen 5 (2 threads, M=2048 K=N=1024): KC 256 -> 375, 384 -> 395, 512 -> 410 GFLOP/s.
constexpr int64_t KC_MAX = 512;
constexpr int64_t MC_PANELS = 24;  // A block of MC = 24 * MR rows by KC (~690 KiB) stays in L2

inline int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Epilogue modes: whether C already holds a partial sum, whether this is the
// last K block (then bias + ReLU are applied).
enum : int { kAccumulate = 1, kLast = 2 };

#ifdef __AVX512F__
// C[0:mr, 0:nr] (op)= Ap[kc x MR] * Bp[kc x NR]; Ap/Bp packed, 64-byte aligned.
inline void micro_kernel(int64_t kc, const float* __restrict ap, const float* __restrict bp,
                         float* __restrict c, int64_t ldc, int mr, int nr,
                         const float* __restrict bias, int mode) {
  __m512 acc[MR][2];
#pragma GCC unroll 14
  for (int i = 0; i < MR; ++i) acc[i][0] = acc[i][1] = _mm512_setzero_ps();
  for (int64_t k = 0; k < kc; ++k) {
    const __m512 b0 = _mm512_load_ps(bp);
    const __m512 b1 = _mm512_load_ps(bp + 16);
    _mm_prefetch(reinterpret_cast<const char*>(bp + 8 * NR), _MM_HINT_T0);
#pragma GCC unroll 14
    for (int i = 0; i < MR; ++i) {
      const __m512 av = _mm512_set1_ps(ap[i]);
      acc[i][0] = _mm512_fmadd_ps(av, b0, acc[i][0]);
      acc[i][1] = _mm512_fmadd_ps(av, b1, acc[i][1]);
    }
    ap += MR;
    bp += NR;
  }
  const __mmask16 m0 = nr >= 16 ? __mmask16(0xffff) : __mmask16((1u << nr) - 1u);
  const __mmask16 m1 = nr >= 32 ? __mmask16(0xffff)
                       : nr <= 16 ? __mmask16(0)
                                  : __mmask16((1u << (nr - 16)) - 1u);
  __m512 bias0 = _mm512_setzero_ps(), bias1 = _mm512_setzero_ps();
  if (mode & kLast) {
    bias0 = _mm512_maskz_loadu_ps(m0, bias);
    bias1 = _mm512_maskz_loadu_ps(m1, bias + 16);
  }
  const __m512 zero = _mm512_setzero_ps();
#pragma GCC unroll 14
  for (int i = 0; i < MR; ++i) {
    if (i < mr) {
      float* cr = c + i * ldc;
      __m512 v0 = acc[i][0], v1 = acc[i][1];
      if (mode & kAccumulate) {
        v0 = _mm512_add_ps(v0, _mm512_maskz_loadu_ps(m0, cr));
        v1 = _mm512_add_ps(v1, _mm512_maskz_loadu_ps(m1, cr + 16));
      }
      if (mode & kLast) {
        v0 = _mm512_max_ps(_mm512_add_ps(v0, bias0), zero);
        v1 = _mm512_max_ps(_mm512_add_ps(v1, bias1), zero);
      }
      _mm512_mask_storeu_ps(cr, m0, v0);
      _mm512_mask_storeu_ps(cr + 16, m1, v1);
    }
  }
}
#else
inline void micro_kernel(int64_t kc, const float* __restrict ap, const float* __restrict bp,
                         float* __restrict c, int64_t ldc, int mr, int nr,
                         const float* __restrict bias, int mode) {
  float acc[MR][NR] = {};
  for (int64_t k = 0; k < kc; ++k) {
    for (int i = 0; i < MR; ++i) {
      const float av = ap[i];
#pragma omp simd
      for (int j = 0; j < NR; ++j) acc[i][j] += av * bp[j];
    }
    ap += MR;
    bp += NR;
  }
  for (int i = 0; i < mr; ++i) {
    float* cr = c + i * ldc;
    for (int j = 0; j < nr; ++j) {
      float v = acc[i][j];
      if (mode & kAccumulate) v += cr[j];
      if (mode & kLast) {
        v += bias[j];
        v = v > 0.f ? v : 0.f;
      }
      cr[j] = v;
    }
  }
}
#endif

// Packs B[pc:pc+kc, jc:jc+NR] (row stride ldb) into kc x NR, zero-padding columns >= n.
inline void pack_b_panel(const float* __restrict b, int64_t ldb, int64_t kc, int64_t cols,
                         float* __restrict dst) {
  for (int64_t k = 0; k < kc; ++k) {
    const float* src = b + k * ldb;
    float* d = dst + k * NR;
    if (cols == NR) {
#pragma omp simd
      for (int j = 0; j < NR; ++j) d[j] = src[j];
    } else {
      for (int j = 0; j < NR; ++j) d[j] = j < cols ? src[j] : 0.f;
    }
  }
}

// Packs A[i0:i0+rows, pc:pc+kc] (row stride lda) into kc x MR, zero-padding rows >= rows.
inline void pack_a_panel(const float* __restrict a, int64_t lda, int64_t kc, int rows,
                         float* __restrict dst) {
  if (rows == MR) {
    for (int64_t k = 0; k < kc; ++k)
#pragma GCC unroll 14
      for (int i = 0; i < MR; ++i) dst[k * MR + i] = a[i * lda + k];
  } else {
    for (int64_t k = 0; k < kc; ++k)
      for (int i = 0; i < MR; ++i) dst[k * MR + i] = i < rows ? a[i * lda + k] : 0.f;
  }
}

}  // namespace

extern "C" int kevolve_kernel(const kv_args* args) {
  const kv_tensor& A = args->inputs[0];
  const kv_tensor& B = args->inputs[1];
  const kv_tensor& bias = args->inputs[2];
  const kv_tensor& C = args->outputs[0];
  if (A.dtype != KV_F32 || B.dtype != KV_F32 || bias.dtype != KV_F32 || C.dtype != KV_F32)
    return KV_ERR_UNSUPPORTED;
  if (A.strides[1] != 1 || B.strides[1] != 1 || C.strides[1] != 1 || bias.strides[0] != 1)
    return KV_ERR_UNSUPPORTED;
  const int64_t m = A.dims[0], k = A.dims[1], n = B.dims[1];
  const int64_t lda = A.strides[0], ldb = B.strides[0], ldc = C.strides[0];
  const float* ap = static_cast<const float*>(A.data);
  const float* bp = static_cast<const float*>(B.data);
  const float* biasp = static_cast<const float*>(bias.data);
  float* cp = static_cast<float*>(C.data);
  if (m <= 0 || n <= 0) return KV_OK;

  const int64_t m_panels = ceil_div(m, MR), n_panels = ceil_div(n, NR);
  const int64_t n_pad = n_panels * NR;
  // K blocks of nearly equal size, each at most KC_MAX.
  const int64_t k_blocks = k > 0 ? ceil_div(k, KC_MAX) : 0;
  const int64_t kc_nom = k_blocks > 0 ? ceil_div(k, k_blocks) : 0;

  // Workspace: packed B (k x n_pad), then packed A (m_panels*MR x k), 64-byte aligned.
  const uintptr_t base = reinterpret_cast<uintptr_t>(args->workspace);
  const uintptr_t b_start = (base + 63) & ~uintptr_t(63);
  const int64_t b_bytes = ((k * n_pad * 4 + 63) / 64) * 64;
  const int64_t a_bytes = m_panels * MR * k * 4;
  if (args->workspace == nullptr ||
      static_cast<int64_t>(b_start - base) + b_bytes + a_bytes > args->workspace_bytes)
    return KV_ERR_WORKSPACE;
  float* bpack = reinterpret_cast<float*>(b_start);
  float* apack = reinterpret_cast<float*>(b_start + b_bytes);

  if (k == 0) {  // C = relu(bias)
#pragma omp parallel for num_threads(args->num_threads)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) cp[i * ldc + j] = biasp[j] > 0.f ? biasp[j] : 0.f;
    return KV_OK;
  }

  const int nthreads = args->num_threads > 0 ? args->num_threads : 1;
#pragma omp parallel num_threads(nthreads)
  {
    // 1. Pack B and A. Block kb of B (rows pc..pc+kc) holds kc x n_pad floats at
    //    bpack + pc * n_pad as n_panels micro-panels of kc x NR. Row panel ip of
    //    A holds k x MR floats at apack + ip * MR * k; its block kb starts at
    //    + pc * MR. Packing is O(MK + KN), small next to the O(MNK) product.
#pragma omp for collapse(2) schedule(static) nowait
    for (int64_t kb = 0; kb < k_blocks; ++kb)
      for (int64_t jp = 0; jp < n_panels; ++jp) {
        const int64_t pc = kb * kc_nom;
        const int64_t kc = (k - pc) < kc_nom ? (k - pc) : kc_nom;
        const int64_t j0 = jp * NR;
        const int64_t cols = (n - j0) < NR ? (n - j0) : NR;
        pack_b_panel(bp + pc * ldb + j0, ldb, kc, cols, bpack + pc * n_pad + j0 * kc);
      }
#pragma omp for schedule(static)
    for (int64_t ip = 0; ip < m_panels; ++ip) {
      const int64_t i0 = ip * MR;
      const int rows = static_cast<int>((m - i0) < MR ? (m - i0) : MR);
      pack_a_panel(ap + i0 * lda, lda, k, rows, apack + ip * MR * k);
    }
    // (implicit barrier: both operands are packed)

    // 2. Split the grid of C tiles between threads: by row panels when there are
    //    enough of them, otherwise also by column panels.
    const int nt = omp_get_num_threads(), tid = omp_get_thread_num();
    const int tm = m_panels >= nt ? nt : static_cast<int>(m_panels);
    const int tn = nt / tm;
    if (tid < tm * tn) {
      const int ti = tid % tm, tj = tid / tm;
      const int64_t mp0 = m_panels * ti / tm, mp1 = m_panels * (ti + 1) / tm;
      const int64_t np0 = n_panels * tj / tn, np1 = n_panels * (tj + 1) / tn;
      for (int64_t kb = 0; kb < k_blocks; ++kb) {
        const int64_t pc = kb * kc_nom;
        const int64_t kc = (k - pc) < kc_nom ? (k - pc) : kc_nom;
        const int mode = (kb > 0 ? kAccumulate : 0) | (kb == k_blocks - 1 ? kLast : 0);
        for (int64_t ic = mp0; ic < mp1; ic += MC_PANELS) {
          const int64_t ic_end = (ic + MC_PANELS) < mp1 ? (ic + MC_PANELS) : mp1;
          for (int64_t jp = np0; jp < np1; ++jp) {
            const int64_t j0 = jp * NR;
            const int nr = static_cast<int>((n - j0) < NR ? (n - j0) : NR);
            const float* bpanel = bpack + pc * n_pad + j0 * kc;
            for (int64_t ip = ic; ip < ic_end; ++ip) {
              const int64_t i0 = ip * MR;
              const int mr = static_cast<int>((m - i0) < MR ? (m - i0) : MR);
              micro_kernel(kc, apack + ip * MR * k + pc * MR, bpanel, cp + i0 * ldc + j0, ldc,
                           mr, nr, biasp + j0, mode);
            }
          }
        }
      }
    }
  }
  return KV_OK;
}
