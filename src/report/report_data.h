// The data of the HTML report as JSON: everything the page draws, computed
// here so that its numbers are the ones of summarize() (and so of the text,
// Markdown and CSV summaries). Layout of the object: html_report.h.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "store/sweep_record.h"

namespace kevolve::report {

// Per backend, the peaks a sweep's measurements imply. Every stored roofline
// fraction is floor / measured time, so achieved / fraction is the roof at
// that shape's arithmetic intensity: min(intensity x bandwidth, compute).
// The largest GB/s roof is the peak bandwidth when any shape was memory
// bound; the compute peak is known only when some shape was compute bound
// (its GB/s roof is below the peak bandwidth), else it is 0.
struct implied_roofline {
  double peak_gbs = 0.0;
  double peak_gflops = 0.0;  // 0: no compute-bound shape was measured
};
implied_roofline implied_peaks(const store::sweep_record& r, const std::string& backend);

// Failure reasons with their numbers masked ("max error 0.31 at 17" ->
// "max error # at #"), first line only, at most 160 characters: the key
// under which the report groups failures.
std::string reason_pattern(const std::string& reason);

// The page's data (without code): sweep, summary, tasks with their trees,
// measurements, evaluation order, failure groups and roofline.
nlohmann::json report_data(const store::sweep_record& r, const std::string& store_name);

// The candidates' code, full reasons and LLM exchanges, kept apart so the
// page parses them only when a node is opened: per task {code: [node 0,
// node 1, ...], reason: [...], llm: [exchange, ...]}, where an exchange has
// node, endpoint, model, status, error, messages (the prompt: [{role,
// content}, ...]), reply, documents (paths), attempts, prompt_tokens,
// completion_tokens, tokens_estimated, latency_s, total_s, cost, prompt_ms.
nlohmann::json report_code(const store::sweep_record& r);

}  // namespace kevolve::report
