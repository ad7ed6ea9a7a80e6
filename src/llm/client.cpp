#include "llm/client.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include "llm/http.h"

namespace kevolve::llm {
namespace {

using clock_type = std::chrono::steady_clock;

double seconds(clock_type::duration d) { return std::chrono::duration<double>(d).count(); }

std::string fixed(double v, int digits = 1) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

std::string host_of(const std::string& url) {
  auto b = url.find("://");
  b = b == std::string::npos ? 0 : b + 3;
  return url.substr(b, url.find('/', b) - b);
}

}  // namespace

const char* to_string(chat_status s) {
  switch (s) {
    case chat_status::ok: return "ok";
    case chat_status::failed: return "failed";
    case chat_status::unavailable: return "unavailable";
    case chat_status::over_budget: return "over_budget";
  }
  return "failed";
}

http_llm_client::http_llm_client(llm_config config, notice_sink notice)
    : config_(std::move(config)), notice_(std::move(notice)) {
  if (!notice_) notice_ = [](const std::string& m) { std::fprintf(stderr, "kevolve: llm: %s\n", m.c_str()); };
  for (auto& e : config_.endpoints) {
    if (e.name.empty()) e.name = e.model + "@" + host_of(e.base_url);
    endpoint_state s;
    s.config = e;
    endpoints_.push_back(std::move(s));
  }
  http_global_init();
}

void http_llm_client::tell_once(const std::string& key, const std::string& message) {
  {
    std::lock_guard<std::mutex> lk(mu_);
    if (!told_.insert(key).second) return;
  }
  notice_(redact(message));
}

std::string http_llm_client::redact(std::string text) const {
  for (const auto& e : endpoints_) {
    if (e.config.api_key_env.empty()) continue;
    const char* key = std::getenv(e.config.api_key_env.c_str());
    if (!key || std::string(key).size() < 4) continue;
    const std::string k = key;
    for (size_t at = text.find(k); at != std::string::npos; at = text.find(k, at)) text.replace(at, k.size(), "[redacted]");
  }
  return text;
}

bool http_llm_client::any_up_locked(clock_type::time_point now) const {
  for (const auto& e : endpoints_)
    if (!e.dropped && e.suspended_until <= now) return true;
  return false;
}

int http_llm_client::choose_locked(clock_type::time_point now) {
  double total = 0;
  for (const auto& e : endpoints_)
    if (!e.dropped && e.suspended_until <= now && e.in_flight < std::max(1, e.config.max_concurrency))
      total += std::max(0.0, e.config.weight);
  if (total <= 0) return -1;
  double pick = std::uniform_real_distribution<double>(0, total)(rng_);
  int last = -1;
  for (size_t i = 0; i < endpoints_.size(); ++i) {
    const auto& e = endpoints_[i];
    if (e.dropped || e.suspended_until > now || e.in_flight >= std::max(1, e.config.max_concurrency) ||
        e.config.weight <= 0)
      continue;
    last = int(i);
    if (pick < e.config.weight) return int(i);
    pick -= e.config.weight;
  }
  return last;
}

std::string http_llm_client::budget_block_locked(const std::string& task) const {
  const budget_config& b = config_.budget;
  if (b.tokens > 0 && total_.tokens() >= b.tokens)
    return "the sweep's token budget is spent (" + std::to_string(total_.tokens()) + " of " + std::to_string(b.tokens) + ")";
  if (b.cost > 0 && total_.cost >= b.cost)
    return "the sweep's cost budget is spent (" + fixed(total_.cost, 4) + " of " + fixed(b.cost, 4) + ")";
  auto it = per_task_.find(task);
  if (it == per_task_.end()) return "";
  if (b.task_tokens > 0 && it->second.tokens() >= b.task_tokens)
    return "task " + task + "'s token budget is spent (" + std::to_string(it->second.tokens()) + " of " +
           std::to_string(b.task_tokens) + ")";
  if (b.task_cost > 0 && it->second.cost >= b.task_cost)
    return "task " + task + "'s cost budget is spent (" + fixed(it->second.cost, 4) + " of " + fixed(b.task_cost, 4) + ")";
  return "";
}

http_llm_client::verdict http_llm_client::attempt(endpoint_state& e, const std::vector<chat_message>& messages,
                                                  chat_outcome& out, double& wait_s) {
  const endpoint_config& c = e.config;
  out.endpoint = c.name;
  out.model = c.model;
  http_post_request req;
  std::string base = c.base_url;
  while (!base.empty() && base.back() == '/') base.pop_back();
  req.url = base + "/chat/completions";
  req.headers.push_back("Content-Type: application/json");
  if (!c.api_key_env.empty()) {
    const char* key = std::getenv(c.api_key_env.c_str());
    if (!key || !*key) {
      out.error = "endpoint " + c.name + ": the environment variable " + c.api_key_env +
                  " (llm.endpoints[].api_key_env) is not set";
      tell_once("nokey:" + c.name, out.error + "; this endpoint is not used");
      return verdict::drop;
    }
    req.headers.push_back(std::string("Authorization: Bearer ") + key);
  }
  for (const auto& [name, value] : c.headers) req.headers.push_back(name + ": " + value);
  req.body = request_body(c, messages);
  req.connect_timeout_ms = long(std::min(c.connect_timeout_s, c.read_timeout_s) * 1000);
  req.total_timeout_ms = long(c.read_timeout_s * 1000);

  const auto t0 = clock_type::now();
  http_response r = http_post(req);
  const double took = seconds(clock_type::now() - t0);
  const std::string who = "endpoint " + c.name + ": ";
  if (!r.transport_ok) {
    out.error = who + (r.timed_out ? "timed out after " + fixed(took) + " s" : "network error: " + r.transport_error);
    return verdict::retry;
  }
  if (r.status == 200) {
    auto parsed = parse_completion(r.body, messages);
    if (!parsed) {
      out.error = who + parsed.error().message;
      return verdict::retry;
    }
    out.reply = std::move(*parsed);
    out.latency_s = took;
    return verdict::ok;
  }
  const std::string detail = redact(error_detail(r.body));
  const std::string http = "HTTP " + std::to_string(r.status);
  if (r.status == 401 || r.status == 403) {
    out.error = who + http + ": the server refused the credentials" +
                (c.api_key_env.empty() ? std::string(" (no api_key_env is set)") : " in $" + c.api_key_env) + " (" +
                detail + ")";
    tell_once("auth:" + c.name, out.error + "; this endpoint is not used again in this sweep");
    return verdict::drop;
  }
  if (says_unknown_model(r.status, r.body)) {
    out.error = who + http + ": the server does not know model '" + c.model + "' (" + detail + ")";
    tell_once("model:" + c.name, out.error + "; this endpoint is not used again in this sweep");
    return verdict::drop;
  }
  if (r.status == 429 || r.status == 408 || r.status >= 500) {
    wait_s = parse_retry_after(r.retry_after);
    out.error = who + http + (wait_s >= 0 ? " (retry after " + fixed(wait_s) + " s)" : "") + ": " + detail;
    return verdict::retry;
  }
  out.error = who + http + ": " + detail;
  return verdict::fail;
}

chat_outcome http_llm_client::chat(const std::string& task, const std::vector<chat_message>& messages) {
  chat_outcome out;
  const auto start = clock_type::now();
  auto finish = [&](chat_status s) {
    out.status = s;
    out.total_s = seconds(clock_type::now() - start);
    out.error = redact(out.error);
    for (auto& line : out.attempt_log) line = redact(line);
    return out;
  };
  for (int k = 0; k <= std::max(0, config_.retries); ++k) {
    std::unique_lock<std::mutex> lk(mu_);
    if (std::string b = budget_block_locked(task); !b.empty()) {
      lk.unlock();
      out.error = b;  // the caller says what it does instead
      return finish(chat_status::over_budget);
    }
    int i = -1;
    for (;;) {
      const auto now = clock_type::now();
      if (!any_up_locked(now)) {
        out.error = endpoints_.empty() ? "no llm endpoint is configured (llm.endpoints)"
                                       : "no llm endpoint is usable" + (out.error.empty() ? "" : " (last: " + out.error + ")");
        lk.unlock();
        return finish(out.attempts ? chat_status::failed : chat_status::unavailable);
      }
      if ((i = choose_locked(now)) >= 0) break;
      slot_free_.wait_for(lk, std::chrono::milliseconds(50));
    }
    endpoint_state& e = endpoints_[size_t(i)];
    ++e.in_flight;
    lk.unlock();
    double wait_s = -1;
    const verdict v = attempt(e, messages, out, wait_s);
    lk.lock();
    --e.in_flight;
    ++out.attempts;
    slot_free_.notify_all();
    if (v == verdict::ok) {
      e.consecutive_failures = 0;
      const token_usage& u = out.reply.usage;
      out.cost = double(u.prompt_tokens) * e.config.input_cost_per_mtok / 1e6 +
                 double(u.completion_tokens) * e.config.output_cost_per_mtok / 1e6;
      for (spending* s : {&total_, &per_task_[task]}) {
        s->prompt_tokens += u.prompt_tokens;
        s->completion_tokens += u.completion_tokens;
        s->cost += out.cost;
        ++s->requests;
      }
      lk.unlock();
      return finish(chat_status::ok);
    }
    out.attempt_log.push_back(out.error);
    if (v == verdict::drop) {
      e.dropped = true;
      continue;
    }
    if (v == verdict::fail) {
      lk.unlock();
      return finish(chat_status::failed);
    }
    // Retryable: back off (Retry-After when given), suspend a failing endpoint.
    double backoff = config_.backoff_s * std::pow(2.0, k) * std::uniform_real_distribution<double>(0.5, 1.5)(rng_);
    if (wait_s >= 0) backoff = wait_s;
    const auto now = clock_type::now();
    if (wait_s > config_.max_backoff_s) {
      e.suspended_until = now + std::chrono::milliseconds(long(wait_s * 1000));
      backoff = 0;  // another endpoint may answer meanwhile
    }
    if (++e.consecutive_failures >= std::max(1, config_.failures_to_suspend)) {
      e.suspended_until = std::max(e.suspended_until, now + std::chrono::milliseconds(long(config_.suspend_s * 1000)));
      e.consecutive_failures = 0;
      const std::string name = e.config.name, last = out.error;
      lk.unlock();
      tell_once("suspend:" + name, "endpoint " + name + " suspended for " + fixed(config_.suspend_s, 0) + " s after " +
                                       std::to_string(config_.failures_to_suspend) + " failed requests in a row (last: " + last + ")");
    } else {
      lk.unlock();
    }
    if (k == config_.retries) break;
    std::this_thread::sleep_for(std::chrono::duration<double>(std::min(backoff, config_.max_backoff_s)));
  }
  return finish(chat_status::failed);
}

std::string http_llm_client::blocked(const std::string& task) const {
  std::lock_guard<std::mutex> lk(mu_);
  if (std::string b = budget_block_locked(task); !b.empty()) return b;
  if (endpoints_.empty()) return "no llm endpoint is configured (llm.endpoints)";
  if (!any_up_locked(clock_type::now())) return "every llm endpoint is refused or suspended";
  return "";
}

spending http_llm_client::spent() const {
  std::lock_guard<std::mutex> lk(mu_);
  return total_;
}

spending http_llm_client::spent(const std::string& task) const {
  std::lock_guard<std::mutex> lk(mu_);
  auto it = per_task_.find(task);
  return it == per_task_.end() ? spending{} : it->second;
}

void http_llm_client::add_spent(const std::string& task, const spending& s) {
  std::lock_guard<std::mutex> lk(mu_);
  for (spending* t : {&total_, &per_task_[task]}) {
    t->prompt_tokens += s.prompt_tokens;
    t->completion_tokens += s.completion_tokens;
    t->cost += s.cost;
    t->requests += s.requests;
  }
}

}  // namespace kevolve::llm
