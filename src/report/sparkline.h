// A sparkline for a terminal: one Unicode block character per column, for
// the live progress of `kevolve run` (best fitness over evaluations).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace kevolve::report {

// At most `width` characters (UTF-8), one per value while they fit, else one
// per bucket of consecutive values showing the bucket's largest. Heights are
// proportional to the value over the largest value: "▁" (up to 1/8 of it)
// to "█" (the largest). Values <= 0 or NaN are a space: a fitness of 0 means
// nothing correct yet. Empty input or width 0 gives "".
std::string sparkline(const std::vector<double>& values, size_t width);

}  // namespace kevolve::report
