#include "report/sparkline.h"

#include <algorithm>
#include <cmath>

namespace kevolve::report {

std::string sparkline(const std::vector<double>& values, size_t width) {
  static const char* const blocks[] = {"▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"};
  if (values.empty() || width == 0) return "";
  const size_t columns = std::min(width, values.size());
  std::vector<double> shown(columns, 0.0);
  for (size_t c = 0; c < columns; ++c) {
    const size_t from = c * values.size() / columns, to = (c + 1) * values.size() / columns;
    double m = 0.0;  // NaN and non-positive values stay 0
    for (size_t i = from; i < to; ++i)
      if (values[i] > m) m = values[i];
    shown[c] = m;
  }
  double low = 0.0, top = 0.0;
  for (double v : shown)
    if (v > 0) {
      low = low > 0 ? std::min(low, v) : v;
      top = std::max(top, v);
    }
  std::string out;
  for (double v : shown) {
    if (!(v > 0)) {
      out += ' ';
      continue;
    }
    const int level = top > low ? std::clamp(int(std::lround((v - low) / (top - low) * 7.0)), 0, 7) : 0;
    out += blocks[level];
  }
  return out;
}

}  // namespace kevolve::report
