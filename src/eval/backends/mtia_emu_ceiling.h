// The mtia_emu attainable ceiling (eval/backends/ceiling.h) from the
// profile's parameters only, never from a kernel:
//   memory  = bytes / the level's peak (SRAM, or DRAM at its efficiency:
//             the roofline's term, sram_bytes_per_cycle or
//             dram_bytes_per_cycle * dram_efficiency)
//   compute = flops * products / the DPE's peak (dpe_macs_per_cycle, PEs),
//             products = 3 (hi.hi + hi.lo + lo.hi in bf16) for float dtypes
//             wider than 16 bits whose tolerance is tighter than one bf16
//             product's error (rtol < 2^-8), else 1
//   integer = int_passes / (PEs * (se_elems_per_cycle + vec_bytes_per_cycle / 4)):
//             the SE's and the vector core's 32-bit lanes, both at once
//   fixed   = launch_cycles + dma_descriptor_cycles + sram_latency_cycles:
//             no byte moves before the first request is answered (DRAM's
//             latency is longer, so SRAM's holds for both levels)
//   ceiling = max(memory, compute, integer) + fixed
#pragma once

#include "emu/mtia/params.h"
#include "eval/backends/ceiling.h"

namespace kevolve::eval::mtia_emu {

// The bf16 relative error one product of two bf16-rounded operands can carry
// (2 * 2^-9): a tolerance at or above it lets fp32 products run as one.
inline constexpr double kOneProductRtol = 1.0 / 256;

// Below this share of the ceiling, the launch is not named in `bound`: at
// 20% it alone keeps a shape from 80% of its roofline.
inline constexpr double kLaunchShare = 0.2;

ceiling attainable_ceiling(const emu::mtia::params& p, const ceiling_work& w);

}  // namespace kevolve::eval::mtia_emu
