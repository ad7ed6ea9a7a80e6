// The attainable ceiling of a timed shape (issue 24): the least time any
// kernel can take on the device, counting what the roofline leaves out but no
// kernel avoids: the compute at the cheapest decomposition the engines run
// for the variant's dtype, integer work on the integer lanes, the launch and
// the first DMA's request. The roofline fraction stays the guard's lower
// bound; the attainable fraction (ceiling / measured) is what a shape is
// held to. Backends without a model of these costs give none.
#pragma once

#include <string>

namespace kevolve::eval {

// What the shape asks of the device, from the operator's cost expressions.
struct ceiling_work {
  double bytes = 0;       // the roofline's bytes (median input set)
  double flops = 0;
  double call_bytes = 0;  // every tensor of a call: where they live
  int float_bits = 0;     // widest floating-point input dtype, 0: none
  double rtol = 0;        // the variant's relative tolerance (0: exact)
  double int_passes = 0;  // 32-bit integer-lane passes (operator key `int_passes`)
};

struct ceiling {
  double seconds = 0;    // 0: no ceiling
  double memory_s = 0;   // bytes at the level's peak (the roofline's term)
  double compute_s = 0;  // flops at the DPE's rate for the decomposition
  double integer_s = 0;  // int_passes on every PE's integer lanes
  double fixed_s = 0;    // launch and the first DMA's request
  double products = 1;   // DPE products per product of the variant's dtype
  std::string bound;     // one line: launch, DPE split, DPE, integer engines, memory
};

}  // namespace kevolve::eval
