#include "llm/http.h"

#include <curl/curl.h>

#include <cctype>
#include <ctime>
#include <mutex>

namespace kevolve::llm {
namespace {

size_t on_body(char* data, size_t size, size_t n, void* user) {
  static_cast<std::string*>(user)->append(data, size * n);
  return size * n;
}

size_t on_header(char* data, size_t size, size_t n, void* user) {
  const std::string line(data, size * n);
  const std::string name = "retry-after:";
  if (line.size() > name.size()) {
    bool match = true;
    for (size_t i = 0; i < name.size() && match; ++i)
      match = std::tolower(static_cast<unsigned char>(line[i])) == name[i];
    if (match) {
      std::string v = line.substr(name.size());
      const auto b = v.find_first_not_of(" \t"), e = v.find_last_not_of(" \t\r\n");
      *static_cast<std::string*>(user) = b == std::string::npos ? "" : v.substr(b, e - b + 1);
    }
  }
  return size * n;
}

}  // namespace

void http_global_init() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

http_response http_post(const http_post_request& request) {
  http_global_init();
  http_response out;
  CURL* h = curl_easy_init();
  if (!h) {
    out.transport_error = "could not create a curl handle";
    return out;
  }
  curl_slist* headers = nullptr;
  for (const auto& line : request.headers) headers = curl_slist_append(headers, line.c_str());
  char errbuf[CURL_ERROR_SIZE] = {0};
  curl_easy_setopt(h, CURLOPT_URL, request.url.c_str());
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(h, CURLOPT_POST, 1L);
  curl_easy_setopt(h, CURLOPT_POSTFIELDS, request.body.data());
  curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(request.body.size()));
  curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, request.connect_timeout_ms);
  curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, request.total_timeout_ms);
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
  curl_easy_setopt(h, CURLOPT_WRITEDATA, &out.body);
  curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
  curl_easy_setopt(h, CURLOPT_HEADERDATA, &out.retry_after);
  curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
  curl_easy_setopt(h, CURLOPT_NOPROXY, "127.0.0.1,localhost,::1");
  curl_easy_setopt(h, CURLOPT_ACCEPT_ENCODING, "");  // whatever curl can decode
  const CURLcode rc = curl_easy_perform(h);
  if (rc == CURLE_OK) {
    out.transport_ok = true;
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &out.status);
  } else {
    out.timed_out = rc == CURLE_OPERATION_TIMEDOUT;
    out.transport_error = errbuf[0] ? errbuf : curl_easy_strerror(rc);
  }
  curl_slist_free_all(headers);
  curl_easy_cleanup(h);
  return out;
}

double parse_retry_after(const std::string& value) {
  if (value.empty()) return -1;
  if (value.find_first_not_of("0123456789.") == std::string::npos) {
    try {
      return std::stod(value);
    } catch (...) {
      return -1;
    }
  }
  const time_t when = curl_getdate(value.c_str(), nullptr);  // HTTP-date
  if (when < 0) return -1;
  const double d = std::difftime(when, std::time(nullptr));
  return d < 0 ? 0 : d;
}

}  // namespace kevolve::llm
