#include "report/html_report.h"

#include <string_view>

#include "report/report_data.h"

// Generated at build time from src/report/html/ (cmake/embed_text.cmake).
namespace kevolve::report::assets {
extern const char report_html[];
extern const char report_css[];
extern const char report_common_js[];
extern const char report_tree_js[];
extern const char report_charts_js[];
extern const char report_js[];
}  // namespace kevolve::report::assets

namespace kevolve::report {
namespace {

// JSON safe inside <script>: '<' only occurs inside JSON strings, where
// \u003c means the same character. Invalid UTF-8 in code is replaced.
std::string script_json(const nlohmann::json& j) {
  const std::string s = j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  std::string out;
  out.reserve(s.size() + s.size() / 64);
  for (char c : s) {
    if (c == '<') out += "\\u003c";
    else out += c;
  }
  return out;
}

std::string html_escape(std::string_view s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '&': out += "&amp;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

}  // namespace

std::string html_report(const store::sweep_record& r, const std::string& store_name) {
  const std::pair<std::string_view, std::string> parts[] = {
      {"@KEVOLVE_TITLE@", html_escape("kevolve report: " + store_name)},
      {"@KEVOLVE_STYLE@", assets::report_css},
      {"@KEVOLVE_DATA@", script_json(report_data(r, store_name))},
      {"@KEVOLVE_CODE@", script_json(report_code(r))},
      {"@KEVOLVE_SCRIPT@", std::string(assets::report_common_js) + assets::report_tree_js + assets::report_charts_js +
                               assets::report_js},
  };
  // One pass over the template: inserted text is never searched for markers.
  const std::string_view page = assets::report_html;
  std::string out;
  size_t at = 0;
  while (true) {
    size_t next = std::string_view::npos;
    const std::pair<std::string_view, std::string>* found = nullptr;
    for (const auto& p : parts) {
      const size_t k = page.find(p.first, at);
      if (k < next) {
        next = k;
        found = &p;
      }
    }
    if (!found) break;
    out.append(page.substr(at, next - at));
    out += found->second;
    at = next + found->first.size();
  }
  out.append(page.substr(at));
  return out;
}

}  // namespace kevolve::report
