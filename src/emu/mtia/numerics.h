// Element loads and stores in the emulator's numerics: fp16/bf16 widen
// exactly to fp32, results round to nearest even when stored. The bulk
// forms (widen, narrow) give the same bits as the per-element ones, a row at
// a time and without a dtype switch per element.
#pragma once

#include <cstdint>
#include <cstring>

#include "emu/mtia/host_kernels.h"
#include "kevolve/abi.h"

namespace kevolve::emu::mtia {

// Bytes per element of a dtype the engines accept, 0 if unsupported.
inline int elem_bytes(int32_t dtype) {
  switch (dtype) {
    case KV_F32: return 4;
    case KV_F16: return 2;
    case KV_BF16: return 2;
    case KV_I32: return 4;
    default: return 0;
  }
}
inline bool is_float(int32_t dtype) { return dtype == KV_F32 || dtype == KV_F16 || dtype == KV_BF16; }

inline float load_f(const uint8_t* base, int32_t dtype, int64_t i) {
  switch (dtype) {
    case KV_F32: {
      float v;
      std::memcpy(&v, base + 4 * i, 4);
      return v;
    }
    case KV_F16: {
      uint16_t h;
      std::memcpy(&h, base + 2 * i, 2);
      return kv_f16_to_f32(h);
    }
    case KV_BF16: {
      uint16_t h;
      std::memcpy(&h, base + 2 * i, 2);
      return kv_bf16_to_f32(h);
    }
    default: {
      int32_t v;
      std::memcpy(&v, base + 4 * i, 4);
      return static_cast<float>(v);
    }
  }
}

inline void store_f(uint8_t* base, int32_t dtype, int64_t i, float v) {
  switch (dtype) {
    case KV_F32: std::memcpy(base + 4 * i, &v, 4); break;
    case KV_F16: {
      const uint16_t h = kv_f32_to_f16(v);
      std::memcpy(base + 2 * i, &h, 2);
      break;
    }
    case KV_BF16: {
      const uint16_t h = kv_f32_to_bf16(v);
      std::memcpy(base + 2 * i, &h, 2);
      break;
    }
    default: {
      const int32_t x = static_cast<int32_t>(v);
      std::memcpy(base + 4 * i, &x, 4);
    }
  }
}

// fp32 value of every fp16 bit pattern (kv_f16_to_f32, tabulated once).
const float* f16_table();

// dst[0..n) = the elements src[0..n) of dtype, as fp32 (load_f's values).
inline void widen(const uint8_t* src, int32_t dtype, int64_t n, float* dst) {
  switch (dtype) {
    case KV_F32: std::memcpy(dst, src, size_t(n) * 4); break;
    case KV_F16: widen_f16(src, n, dst); break;
    case KV_BF16:
      for (int64_t i = 0; i < n; ++i) {
        uint16_t h;
        std::memcpy(&h, src + 2 * i, 2);
        const uint32_t u = uint32_t(h) << 16;
        std::memcpy(dst + i, &u, 4);
      }
      break;
    default:
      for (int64_t i = 0; i < n; ++i) {
        int32_t v;
        std::memcpy(&v, src + 4 * i, 4);
        dst[i] = static_cast<float>(v);
      }
  }
}

// Elements dst[0..n) of dtype = src[0..n) (store_f's bits).
inline void narrow(const float* src, int32_t dtype, int64_t n, uint8_t* dst) {
  switch (dtype) {
    case KV_F32: std::memcpy(dst, src, size_t(n) * 4); break;
    case KV_F16: narrow_f16(src, n, dst); break;
    case KV_BF16:
      for (int64_t i = 0; i < n; ++i) {
        const uint16_t h = kv_f32_to_bf16(src[i]);
        std::memcpy(dst + 2 * i, &h, 2);
      }
      break;
    default:
      for (int64_t i = 0; i < n; ++i) {
        const int32_t v = static_cast<int32_t>(src[i]);
        std::memcpy(dst + 4 * i, &v, 4);
      }
  }
}

inline int32_t load_i(const uint8_t* base, int64_t i) {
  int32_t v;
  std::memcpy(&v, base + 4 * i, 4);
  return v;
}
inline void store_i(uint8_t* base, int64_t i, int32_t v) { std::memcpy(base + 4 * i, &v, 4); }

}  // namespace kevolve::emu::mtia
