// Fixed-width text tables: the first row is the header, underlined.
#pragma once

#include <string>
#include <vector>

namespace kevolve::report {

std::string text_table(const std::vector<std::vector<std::string>>& rows);

}  // namespace kevolve::report
