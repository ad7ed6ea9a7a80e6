// Example kernel: sequence_truncate (values[TOTAL,D] fp32, offsets[B+1] -> out_offsets[B+1],
// out_values[B*K,D]: the last min(len_b, K) rows of each sequence packed, zeros after).
//
// What makes it fast:
//  * One parallel region, two phases: each thread sums the kept lengths of its slice of
//    sequences, a barrier publishes the per-thread sums, and each thread then knows where
//    its slice lands and writes its out_offsets and rows without any serial prefix pass.
//  * A sequence's kept rows are one contiguous run in values and in out_values, so each is
//    one streaming copy (16-float blocks, streaming stores into 64-byte-aligned blocks,
//    masked plain stores for the run's unaligned head and tail); the zero tail of
//    out_values is split evenly between threads and streamed as well. Streaming stores
//    skip the read-for-ownership of an output that is written once and never read.
//  * Non-contiguous layouts fall back to a per-row loop.
#include <cstdint>
#include <omp.h>
#include "kevolve/abi.h"
#if defined(__AVX512F__)
// gcc 12 reports -Wmaybe-uninitialized inside its own AVX-512 headers (their
// _mm512_undefined_*() placeholders); silence it for the header text only.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop
#endif

namespace {

constexpr int kMaxThreads = 256;

#if defined(__AVX512F__)

// Lanes of the block at p that come from src when the first `ncopy` floats are copied.
inline __mmask16 copy_mask(int64_t p, int64_t ncopy) {
  const int64_t k = ncopy - p;
  if (k >= 16) return 0xffff;
  if (k <= 0) return 0;
  return static_cast<__mmask16>((1u << k) - 1u);
}

// dst[0, total) = src[0, ncopy) followed by zeros (ncopy <= total).
void emit(float* dst, const float* src, int64_t ncopy, int64_t total) {
  int64_t p = 0;
  const int64_t mis = static_cast<int64_t>(reinterpret_cast<uintptr_t>(dst) & 63) / 4;
  int64_t head = mis ? 16 - mis : 0;
  if (head > total) head = total;
  if (head > 0) {
    const __mmask16 hm = static_cast<__mmask16>((1u << head) - 1u);
    const __m512 v = _mm512_maskz_loadu_ps(hm & copy_mask(0, ncopy), src);
    _mm512_mask_storeu_ps(dst, hm, v);
    p = head;
  }
  if ((reinterpret_cast<uintptr_t>(dst + p) & 63) == 0) {  // always true unless dst % 4 != 0
    for (; p + 64 <= ncopy; p += 64) {  // bulk copy, 4 blocks per step
      const __m512 v0 = _mm512_loadu_ps(src + p), v1 = _mm512_loadu_ps(src + p + 16);
      const __m512 v2 = _mm512_loadu_ps(src + p + 32), v3 = _mm512_loadu_ps(src + p + 48);
      _mm512_stream_ps(dst + p, v0);
      _mm512_stream_ps(dst + p + 16, v1);
      _mm512_stream_ps(dst + p + 32, v2);
      _mm512_stream_ps(dst + p + 48, v3);
    }
    for (; p + 16 <= total && p < ncopy; p += 16)  // copy/zero boundary
      _mm512_stream_ps(dst + p, _mm512_maskz_loadu_ps(copy_mask(p, ncopy), src + p));
    const __m512 z = _mm512_setzero_ps();
    for (; p + 64 <= total; p += 64) {  // bulk zero padding
      _mm512_stream_ps(dst + p, z);
      _mm512_stream_ps(dst + p + 16, z);
      _mm512_stream_ps(dst + p + 32, z);
      _mm512_stream_ps(dst + p + 48, z);
    }
    for (; p + 16 <= total; p += 16) _mm512_stream_ps(dst + p, z);
  }
  for (; p < total; p += 16) {  // tail (or everything, for a misaligned dst)
    const int64_t k = total - p < 16 ? total - p : 16;
    const __mmask16 tm = static_cast<__mmask16>(k == 16 ? 0xffffu : (1u << k) - 1u);
    const __mmask16 cm = tm & copy_mask(p, ncopy);
    const __m512 v = _mm512_maskz_loadu_ps(cm, cm ? src + p : src);
    _mm512_mask_storeu_ps(dst + p, tm, v);
  }
}

#else

void emit(float* dst, const float* src, int64_t ncopy, int64_t total) {
  int64_t p = 0;
  for (; p < ncopy; ++p) dst[p] = src[p];
  for (; p < total; ++p) dst[p] = 0.f;
}

#endif

}  // namespace

extern "C" int kevolve_kernel(const kv_args* a) {
  const kv_tensor& values = a->inputs[0];
  const kv_tensor& out_values = a->outputs[1];
  if (values.dtype != KV_F32 || out_values.dtype != KV_F32) return KV_ERR_UNSUPPORTED;
  const int64_t nseq = a->inputs[1].dims[0] - 1;
  const int64_t keep = kv_param_i(a, 0);
  const int64_t rows = out_values.dims[0], dim = out_values.dims[1];
  const float* vp = static_cast<const float*>(values.data);
  const int64_t* op = static_cast<const int64_t*>(a->inputs[1].data);
  int64_t* oo = static_cast<int64_t*>(a->outputs[0].data);
  float* yp = static_cast<float*>(out_values.data);
  const bool dense = values.strides[0] == dim && values.strides[1] == 1 &&
                     out_values.strides[0] == dim && out_values.strides[1] == 1;
  int threads = a->num_threads < kMaxThreads ? a->num_threads : kMaxThreads;
  if (threads < 1) threads = 1;
  int64_t partial[kMaxThreads];  // kept rows per thread's slice of sequences
  oo[0] = 0;
#pragma omp parallel num_threads(threads)
  {
    const int nt = omp_get_num_threads(), t = omp_get_thread_num();
    const int64_t b0 = nseq * t / nt, b1 = nseq * (t + 1) / nt;
    int64_t kept = 0;
    for (int64_t b = b0; b < b1; ++b) {
      const int64_t len = op[b + 1] - op[b];
      kept += len < keep ? len : keep;
    }
    partial[t] = kept;
#pragma omp barrier
    int64_t row = 0, total = 0;
    for (int q = 0; q < nt; ++q) {
      if (q < t) row += partial[q];
      total += partial[q];
    }
    for (int64_t b = b0; b < b1; ++b) {
      const int64_t len = op[b + 1] - op[b];
      const int64_t n = len < keep ? len : keep;
      const int64_t src_row = op[b + 1] - n;
      if (dense) {
        emit(yp + row * dim, vp + src_row * dim, n * dim, n * dim);
      } else {
        for (int64_t r = 0; r < n; ++r)
          emit(yp + (row + r) * out_values.strides[0], vp + (src_row + r) * values.strides[0],
               dim, dim);
      }
      row += n;
      oo[b + 1] = row;
    }
    // zero rows [total, rows): an even share per thread
    if (dense) {
      const int64_t z0 = total * dim, zn = (rows - total) * dim;
      const int64_t blocks = (zn + 15) / 16;
      const int64_t s = z0 + blocks * t / nt * 16;
      int64_t e = z0 + blocks * (t + 1) / nt * 16;
      if (e > z0 + zn) e = z0 + zn;
      if (s < e) emit(yp + s, vp, 0, e - s);
    } else {
      for (int64_t r = total + t; r < rows; r += nt)
        emit(yp + r * out_values.strides[0], vp, 0, dim);
    }
#if defined(__AVX512F__)
    _mm_sfence();
#endif
  }
  return KV_OK;
}
