// Helpers of the emulator tests: device tensors, kv_args in the mtia_emu ABI
// (data = device addresses), fp16 data and plain CPU references.
#pragma once

#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "emu/mtia/device.h"
#include "kevolve/mtia.h"

namespace kevolve::emu::mtia::testing {

using kernel_fn = int (*)(const kv_args*, kv_mtia_device*);

inline std::vector<uint16_t> random_f16(size_t n, uint32_t seed, float lo = -1.0f, float hi = 1.0f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(lo, hi);
  std::vector<uint16_t> v(n);
  for (auto& x : v) x = kv_f32_to_f16(u(rng));
  return v;
}

// A device tensor: row-major, dims outermost first.
inline kv_tensor device_tensor(device& dev, level where, std::vector<int64_t> dims, int32_t dtype,
                               const void* init = nullptr) {
  kv_tensor t{};
  t.dtype = dtype;
  t.rank = static_cast<int32_t>(dims.size());
  int64_t n = 1;
  for (int i = t.rank - 1; i >= 0; --i) {
    t.dims[i] = dims[i];
    t.strides[i] = n;
    n *= dims[i];
  }
  const int esz = dtype == KV_F32 || dtype == KV_I32 ? 4 : dtype == KV_I64 ? 8 : 2;
  std::string err;
  const uint64_t addr = dev.alloc(where, uint64_t(n) * esz, &err);
  t.data = reinterpret_cast<void*>(static_cast<uintptr_t>(addr));
  if (addr && init) std::memcpy(dev.host(addr, uint64_t(n) * esz), init, size_t(n) * esz);
  return t;
}

inline uint64_t addr_of(const kv_tensor& t) { return static_cast<uint64_t>(reinterpret_cast<uintptr_t>(t.data)); }

struct args_builder {
  kv_args a{};
  args_builder() { a.abi_version = KV_ABI_VERSION; }
  args_builder& in(const kv_tensor& t) { a.inputs[a.num_inputs++] = t; return *this; }
  args_builder& out(const kv_tensor& t) { a.outputs[a.num_outputs++] = t; return *this; }
  args_builder& param(const char* name, int64_t v) {
    a.params[a.num_params++] = kv_param{name, v, static_cast<double>(v)};
    return *this;
  }
};

inline run_result run_kernel(device& dev, kernel_fn k, const kv_args& args) {
  dev.begin_run();
  k(&args, dev.handle());
  return dev.end_run();
}

// C = A x B in double from fp16 inputs (row-major).
inline std::vector<double> gemm_reference(const std::vector<uint16_t>& a, const std::vector<uint16_t>& b, int m, int n,
                                          int k) {
  std::vector<double> c(size_t(m) * n, 0.0);
  for (int i = 0; i < m; ++i)
    for (int kk = 0; kk < k; ++kk) {
      const double av = kv_f16_to_f32(a[size_t(i) * k + kk]);
      for (int j = 0; j < n; ++j) c[size_t(i) * n + j] += av * kv_f16_to_f32(b[size_t(kk) * n + j]);
    }
  return c;
}

}  // namespace kevolve::emu::mtia::testing
