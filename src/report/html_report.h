// `kevolve report STORE --html OUT.html`: one self-contained page. The page
// (src/report/html/: report.html, report.css, and the script in four parts,
// common.js, tree.js, charts.js, report.js, run in that order) is compiled
// into the binary; the data goes in as two JSON blocks:
//   <script type="application/json" id="kv-data">  report_data(): summary,
//     trees (column arrays per node), measurements, failure groups, roofline
//   <script type="application/json" id="kv-code">  report_code(): code,
//     full reasons and the llm synthesizer's exchanges (prompt messages,
//     reply, tokens, cost), parsed by the page only when a node is opened
// Every '<' inside the JSON is written as \u003c, so no string of the store
// can end the script element. The page loads nothing: its Content-Security-
// Policy is default-src 'none' with inline style and script only.
#pragma once

#include <string>

#include "store/sweep_record.h"

namespace kevolve::report {

// `store_name` is shown in the title (the path the user gave).
std::string html_report(const store::sweep_record& r, const std::string& store_name);

}  // namespace kevolve::report
