// Scalar semantics of the SE / vector-core ops (fp32), shared by the RE's
// fused drain and the elementwise engines.
#pragma once

#include <cmath>
#include <cstdint>

#include "emu/mtia/host_kernels.h"
#include "kevolve/mtia.h"

namespace kevolve::emu::mtia {

inline bool is_unary(int32_t op) { return op >= KV_OP_COPY && op <= KV_OP_LOG && (op <= KV_OP_SQUARE || op >= KV_OP_EXP); }
inline bool is_lut(int32_t op) { return op >= KV_OP_EXP && op <= KV_OP_LOG; }
inline bool is_binary(int32_t op) { return op >= KV_OP_ADD && op <= KV_OP_DIV; }
inline bool is_reduction(int32_t op) { return op == KV_OP_SUM || op == KV_OP_RMAX; }

inline float apply_unary(int32_t op, float x) {
  switch (op) {
    case KV_OP_COPY: return x;
    case KV_OP_RELU: return x > 0.0f ? x : 0.0f;
    case KV_OP_NEG: return -x;
    case KV_OP_SQUARE: return x * x;
    case KV_OP_EXP: return std::exp(x);
    case KV_OP_GELU: return 0.5f * x * (1.0f + std::erf(x * 0.70710678118654752f));
    case KV_OP_SIGMOID: return 1.0f / (1.0f + std::exp(-x));
    case KV_OP_SILU: return x / (1.0f + std::exp(-x));
    case KV_OP_TANH: return std::tanh(x);
    case KV_OP_RSQRT: return 1.0f / std::sqrt(x);
    case KV_OP_RECIP: return 1.0f / x;
    case KV_OP_LOG: return std::log(x);
    default: return x;
  }
}

inline float apply_binary(int32_t op, float x, float y) {
  switch (op) {
    case KV_OP_ADD: return x + y;
    case KV_OP_SUB: return x - y;
    case KV_OP_MUL: return x * y;
    case KV_OP_MAX: return x > y ? x : y;
    case KV_OP_MIN: return x < y ? x : y;
    case KV_OP_DIV: return x / y;
    default: return x;
  }
}

// v[i] = op(v[i]) for i < n, the op chosen once per row, not per element.
inline void apply_unary_row(int32_t op, float* v, int32_t n) {
  auto map = [v, n](auto f) {
    for (int32_t i = 0; i < n; ++i) v[i] = f(v[i]);
  };
  switch (op) {
    case KV_OP_COPY: return;
    case KV_OP_RELU: return map([](float x) { return apply_unary(KV_OP_RELU, x); });
    case KV_OP_NEG: return map([](float x) { return apply_unary(KV_OP_NEG, x); });
    case KV_OP_SQUARE: return map([](float x) { return apply_unary(KV_OP_SQUARE, x); });
    case KV_OP_EXP: return exp_row(v, n);
    default: return map([op](float x) { return apply_unary(op, x); });
  }
}

inline int32_t apply_binary_i(int32_t op, int32_t x, int32_t y) {
  const int64_t a = x, b = y;
  switch (op) {
    case KV_OP_ADD: return static_cast<int32_t>(static_cast<uint32_t>(a + b));
    case KV_OP_SUB: return static_cast<int32_t>(static_cast<uint32_t>(a - b));
    case KV_OP_MUL: return static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(a * b)));
    case KV_OP_MAX: return x > y ? x : y;
    case KV_OP_MIN: return x < y ? x : y;
    case KV_OP_DIV: return y == 0 ? 0 : static_cast<int32_t>(a / b);
    default: return x;
  }
}

}  // namespace kevolve::emu::mtia
