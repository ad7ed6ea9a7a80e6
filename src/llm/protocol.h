// The OpenAI chat-completions wire format: the request body and what a reply
// (or an error reply) says. Plain functions over nlohmann-json.
#pragma once

#include <string>
#include <vector>

#include "common/error.h"
#include "llm/config.h"

namespace kevolve::llm {

struct chat_message {
  std::string role;  // system | user | assistant
  std::string content;
};

struct token_usage {
  long long prompt_tokens = 0;
  long long completion_tokens = 0;
  bool estimated = false;  // the server sent no `usage`: about 4 characters per token
  long long total() const { return prompt_tokens + completion_tokens; }
};

struct completion {
  std::string content;
  std::string finish_reason;  // stop | length | ...
  std::string model;          // as the server names it
  token_usage usage;
};

std::string request_body(const endpoint_config& e, const std::vector<chat_message>& messages);

// A 200 reply. Errors (invalid_input): not JSON, no choices, no message
// content; the message says what was missing and starts with "malformed reply".
expected<completion> parse_completion(const std::string& body, const std::vector<chat_message>& sent);

// The `error.message` (and `error.code`) of an error reply, or a short
// excerpt of the body when it is not the OpenAI error shape.
std::string error_detail(const std::string& body);

// Whether an error reply says the model does not exist (404, or 400 with a
// model_not_found code or message).
bool says_unknown_model(long status, const std::string& body);

}  // namespace kevolve::llm
