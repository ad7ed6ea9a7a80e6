#include "llm/protocol.h"

#include <algorithm>
#include <cctype>

#include <nlohmann/json.hpp>

namespace kevolve::llm {
using json = nlohmann::json;

std::string request_body(const endpoint_config& e, const std::vector<chat_message>& messages) {
  json j;
  j["model"] = e.model;
  j["messages"] = json::array();
  for (const auto& m : messages) j["messages"].push_back({{"role", m.role}, {"content", m.content}});
  j["temperature"] = e.temperature;
  j["max_tokens"] = e.max_tokens;
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

expected<completion> parse_completion(const std::string& body, const std::vector<chat_message>& sent) {
  json j = json::parse(body, nullptr, false);
  auto bad = [&](const std::string& what) {
    return make_error(errc::invalid_input, "malformed reply: " + what + " (" + std::to_string(body.size()) + " bytes)");
  };
  if (j.is_discarded()) return bad("not JSON");
  if (!j.is_object()) return bad("not a JSON object");
  if (!j.contains("choices") || !j["choices"].is_array() || j["choices"].empty()) return bad("no 'choices'");
  const json& c = j["choices"][0];
  if (!c.is_object() || !c.contains("message") || !c["message"].is_object()) return bad("no 'choices[0].message'");
  const json& m = c["message"];
  completion out;
  if (m.contains("content") && m["content"].is_string()) out.content = m["content"].get<std::string>();
  else if (m.contains("content") && m["content"].is_null()) out.content = "";
  else return bad("no string 'choices[0].message.content'");
  if (c.contains("finish_reason") && c["finish_reason"].is_string()) out.finish_reason = c["finish_reason"].get<std::string>();
  if (j.contains("model") && j["model"].is_string()) out.model = j["model"].get<std::string>();
  const json u = j.value("usage", json());
  if (u.is_object() && u.contains("prompt_tokens") && u["prompt_tokens"].is_number_integer()) {
    out.usage.prompt_tokens = u["prompt_tokens"].get<long long>();
    out.usage.completion_tokens = u.value("completion_tokens", 0LL);
  } else {
    size_t chars = 0;
    for (const auto& s : sent) chars += s.content.size();
    out.usage.prompt_tokens = static_cast<long long>(chars / 4 + 1);
    out.usage.completion_tokens = static_cast<long long>(out.content.size() / 4 + 1);
    out.usage.estimated = true;
  }
  return out;
}

std::string error_detail(const std::string& body) {
  json j = json::parse(body, nullptr, false);
  if (j.is_object() && j.contains("error")) {
    const json& e = j["error"];
    if (e.is_string()) return e.get<std::string>();
    if (e.is_object()) {
      std::string out = e.value("message", std::string());
      if (e.contains("code") && e["code"].is_string()) out += " (" + e["code"].get<std::string>() + ")";
      if (!out.empty()) return out;
    }
  }
  std::string excerpt = body.substr(0, 200);
  std::replace_if(excerpt.begin(), excerpt.end(), [](char ch) { return ch == '\n' || ch == '\r'; }, ' ');
  return excerpt.empty() ? "empty body" : excerpt;
}

bool says_unknown_model(long status, const std::string& body) {
  if (status == 404) return true;
  if (status != 400) return false;
  std::string d = error_detail(body);
  std::transform(d.begin(), d.end(), d.begin(), [](unsigned char ch) { return std::tolower(ch); });
  return d.find("model_not_found") != std::string::npos ||
         (d.find("model") != std::string::npos &&
          (d.find("does not exist") != std::string::npos || d.find("not found") != std::string::npos ||
           d.find("unknown") != std::string::npos));
}

}  // namespace kevolve::llm
