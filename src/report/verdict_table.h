// Renders a verdict for people: one row per shape.
#pragma once

#include <string>

#include "eval/verdict.h"

namespace kevolve::report {

std::string verdict_table(const eval::verdict& v);

// 1.23 us, 4.56 ms, 7.89 s
std::string format_seconds(double s);

}  // namespace kevolve::report
