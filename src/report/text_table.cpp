#include "report/text_table.h"

#include <algorithm>

#include <fmt/format.h>

namespace kevolve::report {

std::string text_table(const std::vector<std::vector<std::string>>& rows) {
  if (rows.empty()) return {};
  std::vector<size_t> w(rows.front().size(), 0);
  for (const auto& r : rows)
    for (size_t i = 0; i < r.size() && i < w.size(); ++i) w[i] = std::max(w[i], r[i].size());
  std::string out;
  for (size_t k = 0; k < rows.size(); ++k) {
    for (size_t i = 0; i < rows[k].size() && i < w.size(); ++i) out += fmt::format("{:<{}}", rows[k][i], w[i] + 2);
    while (!out.empty() && out.back() == ' ') out.pop_back();
    out += "\n";
    if (k == 0) {
      size_t total = 0;
      for (size_t x : w) total += x + 2;
      out += std::string(total - 2, '-') + "\n";
    }
  }
  return out;
}

}  // namespace kevolve::report
