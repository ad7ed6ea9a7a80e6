// A sparkline for a terminal: one Unicode block character per column, for
// the live progress of `kevolve run` (best fitness over evaluations).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace kevolve::report {

// At most `width` characters (UTF-8), one per value while they fit, else one
// per bucket of consecutive values showing the bucket's largest. Heights run
// from "▁" (the smallest positive value shown) to "█" (the largest), in 8
// even steps, so a gain from 1.7x to 2.1x is visible; all equal is "▁".
// Values <= 0 or NaN are a space: a fitness of 0 means nothing correct yet.
// Empty input or width 0 gives "".
std::string sparkline(const std::vector<double>& values, size_t width);

}  // namespace kevolve::report
