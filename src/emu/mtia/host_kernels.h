// The emulator's hottest inner loops, vectorised for the host CPU where it
// can (chosen at run time), with exactly the results of their scalar
// definitions: the same fp32 operations per element, in the same order, and
// the same conversion bits. Only the host's speed depends on the CPU.
#pragma once

#include <cstdint>

namespace kevolve::emu::mtia {

// dst[i] = kv_f16_to_f32(src[i]) for the fp16 elements src[0..n).
void widen_f16(const uint8_t* src, int64_t n, float* dst);

// dst[i] = kv_f32_to_f16(src[i]) (round to nearest even; every NaN becomes
// the quiet NaN 0x7e00 with its sign), n fp16 elements written.
void narrow_f16(const float* src, int64_t n, uint8_t* dst);

// o[i][j] += a[i][kk] * b[kk][j] for kk = 0..k-1 in order, for i < m, j < n:
// per element the product rounded to fp32, then the sum rounded (never
// fused). a is m x k, b is k x n and o is m x n, all rows contiguous.
void mm_tile(const float* a, const float* b, int32_t m, int32_t k, int32_t n, float* o);

// v[i] = std::exp(v[i]) (libm's expf) for i < n, vectorised where the
// host's libm is the one host_exp.cpp reproduces (see there).
void exp_row(float* v, int32_t n);
// Whether exp_row takes its vector path on this host.
bool exp_row_vectorised();

}  // namespace kevolve::emu::mtia
