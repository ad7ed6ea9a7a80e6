// Example kernel: jagged_to_padded_dense (values[TOTAL,D] fp32, offsets[B+1] -> out[B,L,D],
// the first min(len_b, L) rows of sequence b, then zeros).
//
// What makes it fast:
//  * out[b] is one contiguous run of L*D floats whose first n_b*D come from one contiguous
//    run of values: the copy and the zero padding are a single pass over 16-float blocks,
//    each loaded with a mask that is all-ones in the copied part and all-zeros in the
//    padding (a masked-off load reads nothing), so no block mixes two code paths.
//  * Output blocks go out with streaming stores: the output (often larger than the
//    input) is written once and never read, so skipping the read-for-ownership saves a
//    third of the traffic. Only the unaligned head and tail of each run use plain masked
//    stores.
//  * Sequences are split evenly between threads (every sequence writes L*D floats).
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
  const kv_tensor& out = a->outputs[0];
  if (values.dtype != KV_F32 || out.dtype != KV_F32) return KV_ERR_UNSUPPORTED;
  const int64_t nseq = out.dims[0], max_len = out.dims[1], dim = out.dims[2];
  const float* vp = static_cast<const float*>(values.data);
  const int64_t* op = static_cast<const int64_t*>(a->inputs[1].data);
  float* yp = static_cast<float*>(out.data);
  const bool dense = values.strides[0] == dim && values.strides[1] == 1 &&
                     out.strides[2] == 1 && out.strides[1] == dim;
#pragma omp parallel num_threads(a->num_threads)
  {
    const int64_t nt = omp_get_num_threads(), t = omp_get_thread_num();
    const int64_t b0 = nseq * t / nt, b1 = nseq * (t + 1) / nt;
    for (int64_t b = b0; b < b1; ++b) {
      const int64_t len = op[b + 1] - op[b];
      const int64_t n = len < max_len ? len : max_len;
      if (dense) {
        emit(yp + b * out.strides[0], vp + op[b] * dim, n * dim, max_len * dim);
      } else {
        for (int64_t l = 0; l < max_len; ++l)
          emit(yp + b * out.strides[0] + l * out.strides[1], vp + (op[b] + l) * values.strides[0],
               l < n ? dim : 0, dim);
      }
    }
#if defined(__AVX512F__)
    _mm_sfence();
#endif
  }
  return KV_OK;
}
