#include "spec/llm_section.h"

#include <algorithm>
#include <cctype>
#include <sstream>

namespace kevolve::spec {
namespace {

bool env_name(const std::string& s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  return std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isalnum(c) || c == '_'; });
}

std::string num(double v) {
  std::ostringstream o;
  o << v;
  return o.str();
}

struct number_field {
  const char* key;
  double* value;
  double min, max;
};

void numbers(yaml_reader& r, const YAML::Node& map, const std::string& prefix, std::initializer_list<number_field> fields) {
  for (const auto& f : fields) {
    const std::string key = prefix + f.key;
    if (auto v = r.number_value(map, f.key, key, false)) {
      if (*v < f.min || *v > f.max)
        r.fail(map[f.key], key, "must be between " + num(f.min) + " and " + num(f.max) + ", got " + yaml_reader::describe(map[f.key]));
      else *f.value = *v;
    }
  }
}

void load_endpoint(yaml_reader& r, const YAML::Node& e, const std::string& key, llm::endpoint_config& out) {
  r.reject_unknown_keys(e, {"name", "base_url", "model", "api_key_env", "weight", "headers", "temperature", "max_tokens",
                            "connect_timeout_s", "read_timeout_s", "max_concurrency", "input_cost_per_mtok",
                            "output_cost_per_mtok"},
                        key + ".");
  if (auto v = r.string_value(e, "name", key + ".name", false)) out.name = *v;
  if (auto v = r.string_value(e, "base_url", key + ".base_url", true)) {
    if (v->rfind("http://", 0) != 0 && v->rfind("https://", 0) != 0)
      r.fail(e["base_url"], key + ".base_url", "must start with http:// or https:// (e.g. https://api.openai.com/v1)");
    out.base_url = *v;
  }
  if (auto v = r.string_value(e, "model", key + ".model", true)) {
    if (v->empty()) r.fail(e["model"], key + ".model", "must name a model");
    out.model = *v;
  }
  if (auto v = r.string_value(e, "api_key_env", key + ".api_key_env", false)) {
    // Never echo the value: a user may have pasted the key itself here.
    if (!env_name(*v))
      r.fail(e["api_key_env"], key + ".api_key_env",
             "must be the NAME of an environment variable holding the key (letters, digits, _), not the key itself");
    else out.api_key_env = *v;
  }
  double max_tokens = out.max_tokens, concurrency = out.max_concurrency;
  numbers(r, e, key + ".",
          {{"weight", &out.weight, 0, 1e9},
           {"temperature", &out.temperature, 0, 2},
           {"max_tokens", &max_tokens, 1, 1e7},
           {"connect_timeout_s", &out.connect_timeout_s, 0.01, 3600},
           {"read_timeout_s", &out.read_timeout_s, 0.01, 86400},
           {"max_concurrency", &concurrency, 1, 1024},
           {"input_cost_per_mtok", &out.input_cost_per_mtok, 0, 1e9},
           {"output_cost_per_mtok", &out.output_cost_per_mtok, 0, 1e9}});
  out.max_tokens = int(max_tokens);
  out.max_concurrency = int(concurrency);
  YAML::Node h = r.child(e, "headers", key + ".headers", false);
  if (!h.IsDefined()) return;
  if (!h.IsMap()) {
    r.fail(h, key + ".headers", "must map header names to values");
    return;
  }
  for (const auto& kv : h) {
    const std::string name = kv.first.as<std::string>();
    std::string lower = name;
    std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
    if (lower == "authorization" || lower == "api-key" || lower == "x-api-key")
      r.fail(kv.second, key + ".headers." + name, "may not be set here (the config is kept in the store): use api_key_env");
    else if (!kv.second.IsScalar())
      r.fail(kv.second, key + ".headers." + name, "must be a string");
    else
      out.headers[name] = kv.second.Scalar();
  }
}

}  // namespace

void load_llm(yaml_reader& r, const YAML::Node& root, llm::llm_config& out) {
  YAML::Node node = r.child(root, "llm", "llm", false);
  if (!node.IsDefined()) return;
  if (!node.IsMap()) {
    r.fail(node, "llm", "must be a map with 'endpoints'");
    return;
  }
  r.reject_unknown_keys(node, {"endpoints", "budget", "max_in_flight", "retries", "backoff_s", "max_backoff_s",
                               "failures_to_suspend", "suspend_s", "prompt_tokens", "skill_note_chars"},
                        "llm.");
  double in_flight = out.max_in_flight, retries = out.retries, failures = out.failures_to_suspend,
         prompt = out.prompt_tokens, note = out.skill_note_chars;
  numbers(r, node, "llm.",
          {{"max_in_flight", &in_flight, 1, 1024},
           {"retries", &retries, 0, 100},
           {"backoff_s", &out.backoff_s, 0, 3600},
           {"max_backoff_s", &out.max_backoff_s, 0, 86400},
           {"failures_to_suspend", &failures, 1, 1000},
           {"suspend_s", &out.suspend_s, 0, 86400},
           {"prompt_tokens", &prompt, 500, 1e7},
           {"skill_note_chars", &note, 0, 20000}});
  out.max_in_flight = int(in_flight);
  out.retries = int(retries);
  out.failures_to_suspend = int(failures);
  out.prompt_tokens = int(prompt);
  out.skill_note_chars = int(note);
  if (YAML::Node b = r.child(node, "budget", "llm.budget", false); b.IsDefined()) {
    r.reject_unknown_keys(b, {"tokens", "cost", "task_tokens", "task_cost"}, "llm.budget.");
    double tokens = 0, task_tokens = 0;
    numbers(r, b, "llm.budget.",
            {{"tokens", &tokens, 0, 1e15}, {"cost", &out.budget.cost, 0, 1e12},
             {"task_tokens", &task_tokens, 0, 1e15}, {"task_cost", &out.budget.task_cost, 0, 1e12}});
    out.budget.tokens = (long long)tokens;
    out.budget.task_tokens = (long long)task_tokens;
  }
  YAML::Node eps = r.child(node, "endpoints", "llm.endpoints", false);
  if (!eps.IsDefined()) return;
  if (!eps.IsSequence()) {
    r.fail(eps, "llm.endpoints", "must be a list of {base_url, model, api_key_env, weight, ...} entries");
    return;
  }
  double weights = 0;
  for (size_t i = 0; i < eps.size(); ++i) {
    const std::string key = "llm.endpoints[" + std::to_string(i) + "]";
    if (!eps[i].IsMap()) {
      r.fail(eps[i], key, "must be a map {base_url, model, api_key_env, weight, ...}");
      continue;
    }
    llm::endpoint_config e;
    load_endpoint(r, eps[i], key, e);
    weights += e.weight;
    out.endpoints.push_back(std::move(e));
  }
  if (!out.endpoints.empty() && weights <= 0) r.fail(eps, "llm.endpoints", "needs at least one endpoint with a positive weight");
}

}  // namespace kevolve::spec
