// What the sweep YAML says about LLM endpoints (`llm:`), as plain data. The
// spec loader (src/spec, the only yaml-cpp user) fills it; the client in this
// folder uses it. YAML keys are spelled like the fields.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace kevolve::llm {

// One OpenAI-compatible endpoint: POST <base_url>/chat/completions.
struct endpoint_config {
  std::string name;          // for messages; default "<model>@<host>"
  std::string base_url;      // e.g. https://api.openai.com/v1 or http://127.0.0.1:8000/v1
  std::string model;
  std::string api_key_env;   // name of the environment variable holding the key ("" = no key)
  double weight = 1.0;       // share of requests relative to the other endpoints
  std::map<std::string, std::string> headers;  // extra request headers
  double temperature = 0.7;
  int max_tokens = 4096;     // completion tokens per request
  double connect_timeout_s = 10;
  double read_timeout_s = 300;  // the whole request, connecting included, until the reply has arrived
  int max_concurrency = 4;   // requests in flight on this endpoint
  double input_cost_per_mtok = 0;   // price per million prompt tokens (any currency)
  double output_cost_per_mtok = 0;  // price per million completion tokens
};

// Spending limits; 0 means no limit. When one is reached no new request is
// sent (the one in flight completes and is counted).
struct budget_config {
  long long tokens = 0;       // prompt + completion tokens, whole sweep
  double cost = 0;            // whole sweep
  long long task_tokens = 0;  // per task
  double task_cost = 0;       // per task
};

struct llm_config {
  std::vector<endpoint_config> endpoints;
  budget_config budget;
  int max_in_flight = 8;         // synthesizers (requests) working at once
  int retries = 4;               // extra attempts after a retryable failure
  double backoff_s = 1.0;        // first backoff; doubles each retry, with jitter
  double max_backoff_s = 30.0;   // cap, Retry-After included
  int failures_to_suspend = 3;   // consecutive failed requests that suspend an endpoint
  double suspend_s = 60;         // how long a suspended endpoint rests
  int prompt_tokens = 12000;     // the prompt builder's budget
  // Longest skill note (characters) the LLM may write about an improvement;
  // a longer one is refused. 0: no notes are asked for.
  int skill_note_chars = 600;
};

}  // namespace kevolve::llm
