// A GEMM problem on a device: tensors placed per level, random fp16 inputs,
// run a tile configuration, compare with the CPU reference.
#pragma once

#include <cmath>

#include "gemm_kernels.h"
#include "emu_test_util.h"

namespace kevolve::emu::mtia::testing {

struct tiles {
  int mb, nb, kb, slots, bcast, resident_a;
  int redundant = 0;
};

struct gemm_problem {
  int m, n, k;
  level a_at = level::sram, b_at = level::sram, c_at = level::sram;
};

struct gemm_run {
  run_result result;
  double max_err = 0;  // worst |C - ref| / (1e-3 + 2e-3 |ref|); <= 1 passes
};

inline gemm_run run_gemm(device& dev, const gemm_problem& pr, const tiles& t, bool functional, uint32_t seed = 1) {
  dev.free_all();
  dev.set_functional(functional);
  std::vector<uint16_t> a, b;
  if (functional) {
    a = random_f16(size_t(pr.m) * pr.k, seed);
    b = random_f16(size_t(pr.k) * pr.n, seed + 7);
  }
  const kv_tensor ta = device_tensor(dev, pr.a_at, {pr.m, pr.k}, KV_F16, functional ? a.data() : nullptr);
  const kv_tensor tb = device_tensor(dev, pr.b_at, {pr.k, pr.n}, KV_F16, functional ? b.data() : nullptr);
  const kv_tensor tc = device_tensor(dev, pr.c_at, {pr.m, pr.n}, KV_F16);
  args_builder ab;
  ab.in(ta).in(tb).out(tc).param("mb", t.mb).param("nb", t.nb).param("kb", t.kb).param("slots", t.slots)
      .param("bcast", t.bcast).param("resident_a", t.resident_a).param("redundant", t.redundant);
  gemm_run out;
  out.result = run_kernel(dev, gemm_kernel, ab.a);
  if (functional && out.result.ok()) {
    const auto ref = gemm_reference(a, b, pr.m, pr.n, pr.k);
    const auto* c = reinterpret_cast<const uint16_t*>(dev.host(addr_of(tc), uint64_t(pr.m) * pr.n * 2));
    for (size_t i = 0; i < ref.size(); ++i) {
      const double e = std::fabs(double(kv_f16_to_f32(c[i])) - ref[i]) / (1e-3 + 2e-3 * std::fabs(ref[i]));
      if (!(e <= out.max_err)) out.max_err = std::isnan(e) ? INFINITY : std::max(out.max_err, e);
    }
  }
  dev.set_functional(true);
  return out;
}

// Kernel variants a search would try, worst to best.
inline tiles naive_tiles(int mb, int nb, int kb) { return {mb, nb, kb, 1, 0, 0}; }
inline tiles double_buffered_tiles(int mb, int nb, int kb) { return {mb, nb, kb, 2, 0, 0}; }
inline tiles broadcast_tiles(int mb, int nb, int kb) { return {mb, nb, kb, 2, 1, 0}; }

}  // namespace kevolve::emu::mtia::testing
