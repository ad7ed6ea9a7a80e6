// One blocking HTTP POST through libcurl (the only libcurl user in kevolve).
// Safe to call from several threads at once: each call has its own handle.
#pragma once

#include <string>
#include <vector>

namespace kevolve::llm {

struct http_response {
  bool transport_ok = false;  // false: no HTTP response (connect failure, timeout, dropped connection)
  bool timed_out = false;
  std::string transport_error;  // curl's text, when !transport_ok
  long status = 0;
  std::string body;
  std::string retry_after;  // the Retry-After header, verbatim ("" when absent)
};

struct http_post_request {
  std::string url;
  std::vector<std::string> headers;  // "Name: value"
  std::string body;
  long connect_timeout_ms = 10000;
  long total_timeout_ms = 300000;
};

// Initializes libcurl once per process (idempotent, thread-safe).
void http_global_init();

http_response http_post(const http_post_request& request);

// Seconds to wait from a Retry-After value: delta-seconds or an HTTP date;
// negative when absent or unreadable.
double parse_retry_after(const std::string& value);

}  // namespace kevolve::llm
