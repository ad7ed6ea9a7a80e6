// A backend of the tests' own: the cpu backend's worker and checks, but
// kernels compiled at -O1. Its descriptor (cpu_o1_descriptor) is the one row
// that registers it: no other file of kevolve knows it.
#pragma once

#include "eval/backends/registry.h"

namespace kevolve::testing {

eval::backend_descriptor cpu_o1_descriptor();

}  // namespace kevolve::testing
