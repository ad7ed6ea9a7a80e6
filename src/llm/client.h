// The LLM client the synthesizers use: chat(task, messages) against the
// sweep's endpoints, with weighted choice, a concurrency limit per endpoint,
// retries with exponential backoff and jitter (429, 5xx, network errors,
// timeouts, malformed replies; Retry-After honoured), endpoints dropped for
// bad credentials or an unknown model (said once), endpoints suspended
// after consecutive failures, and token/cost accounting per task and per
// sweep with budgets. Thread-safe: one client serves the synthesizer pool.
//
// API keys are read from the environment (endpoint_config::api_key_env) at
// each request, put only in the Authorization header, and removed from every
// text this client returns or reports.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "llm/config.h"
#include "llm/protocol.h"

namespace kevolve::llm {

enum class chat_status {
  ok,
  failed,       // every attempt failed (the error says why)
  unavailable,  // no endpoint can be used (none configured, all dropped or suspended)
  over_budget,  // a budget is spent: nothing was sent
};
const char* to_string(chat_status s);

struct chat_outcome {
  chat_status status = chat_status::failed;
  completion reply;          // when ok
  std::string endpoint;      // the endpoint that answered (or was tried last)
  std::string model;
  double latency_s = 0;      // the successful request alone
  double total_s = 0;        // the whole call, retries and waits included
  int attempts = 0;
  double cost = 0;
  std::string error;         // when not ok
  std::vector<std::string> attempt_log;  // one line per failed attempt
};

struct spending {
  long long prompt_tokens = 0, completion_tokens = 0;
  double cost = 0;
  long long requests = 0;
  long long tokens() const { return prompt_tokens + completion_tokens; }
};

class llm_client {
 public:
  virtual ~llm_client() = default;
  virtual chat_outcome chat(const std::string& task, const std::vector<chat_message>& messages) = 0;
  // "" when a request could be sent now for `task`, else why not (a budget
  // is spent, every endpoint is dropped or suspended).
  virtual std::string blocked(const std::string& task) const = 0;
  bool usable(const std::string& task) const { return blocked(task).empty(); }
  virtual spending spent() const = 0;
  virtual spending spent(const std::string& task) const = 0;
};

// Where the user is told things once ("endpoint x: bad credentials ...").
using notice_sink = std::function<void(const std::string&)>;

class http_llm_client : public llm_client {
 public:
  // `notice` defaults to stderr ("kevolve: llm: ...").
  explicit http_llm_client(llm_config config, notice_sink notice = {});

  chat_outcome chat(const std::string& task, const std::vector<chat_message>& messages) override;
  std::string blocked(const std::string& task) const override;
  spending spent() const override;
  spending spent(const std::string& task) const override;
  // Spending of earlier sessions (a resumed sweep), counted against the budgets.
  void add_spent(const std::string& task, const spending& s);

 private:
  struct endpoint_state {
    endpoint_config config;
    bool dropped = false;
    std::chrono::steady_clock::time_point suspended_until{};
    int consecutive_failures = 0;
    int in_flight = 0;
  };
  enum class verdict { ok, retry, drop, fail };

  int choose_locked(std::chrono::steady_clock::time_point now);  // -1: none usable now
  bool any_up_locked(std::chrono::steady_clock::time_point now) const;
  std::string budget_block_locked(const std::string& task) const;
  void tell_once(const std::string& key, const std::string& message);
  std::string redact(std::string text) const;
  verdict attempt(endpoint_state& e, const std::vector<chat_message>& messages, chat_outcome& out, double& wait_s);

  llm_config config_;
  notice_sink notice_;
  mutable std::mutex mu_;
  std::condition_variable slot_free_;
  std::vector<endpoint_state> endpoints_;
  std::map<std::string, spending> per_task_;
  spending total_;
  std::set<std::string> told_;
  std::mt19937_64 rng_{0x6c6c6d};
};

}  // namespace kevolve::llm
