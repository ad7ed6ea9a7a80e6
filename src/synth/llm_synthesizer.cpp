#include "synth/llm_synthesizer.h"

#include <chrono>

#include <nlohmann/json.hpp>

#include "synth/factory.h"
#include "synth/response_parser.h"

namespace kevolve::synth {
namespace {

// What a diff in the reply applies to: the parent's code ("" on reset).
std::string parent_code(const synthesis_request& req) {
  if (req.mode == search::memory_mode::reset) return "";
  for (const auto& c : req.context)
    if (c.id == req.parent) return c.code;
  return req.context.empty() ? "" : req.context.front().code;
}

// What is stored of one request: the messages sent, the reply, the cost.
llm_call call_of(const llm::chat_outcome& o, const std::vector<llm::chat_message>& messages) {
  llm_call call;
  call.endpoint = o.endpoint;
  call.model = o.model;
  call.attempts = o.attempts;
  call.latency_s = o.latency_s;
  call.total_s = o.total_s;
  call.cost = o.cost;
  nlohmann::json m = nlohmann::json::array();
  for (const auto& x : messages) m.push_back({{"role", x.role}, {"content", x.content}});
  call.prompt = m.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  call.status = llm::to_string(o.status);
  call.error = o.error;
  if (o.status == llm::chat_status::ok) {
    call.reply = o.reply.content;
    call.prompt_tokens = o.reply.usage.prompt_tokens;
    call.completion_tokens = o.reply.usage.completion_tokens;
    call.tokens_estimated = o.reply.usage.estimated;
  }
  return call;
}

}  // namespace

void llm_resources::tell_once(const std::string& key, const std::string& message) {
  {
    std::lock_guard<std::mutex> lk(mu);
    if (!told.insert(key).second) return;
  }
  if (notice) notice(message);
}

expected<std::unique_ptr<llm_synthesizer>> llm_synthesizer::create(std::shared_ptr<llm_resources> shared) {
  auto t = prompt_template::load();
  if (!t) return tl::unexpected(t.error());
  auto notes = note_prompt::load();
  if (!notes) return tl::unexpected(notes.error());
  auto fallback = make_builtin_synthesizer();
  if (!fallback) return tl::unexpected(fallback.error());
  prompt_builder builder(std::move(*t), shared->kb, shared->prompt_tokens);
  return std::unique_ptr<llm_synthesizer>(
      new llm_synthesizer(std::move(shared), std::move(builder), std::move(*notes), std::move(*fallback)));
}

bool llm_synthesizer::supports(const spec::operator_spec& op, const std::string& backend) const {
  // An LLM can write any operator; without one, the builtin templates decide.
  return shared_->client != nullptr || fallback_->supports(op, backend);
}

void llm_synthesizer::tell_fallback(const std::string& why) {
  // Once per reason: "the sweep's token budget is spent (...)" is one reason
  // whatever the figures; a task's budget is one per task.
  const std::string key = why.substr(0, why.find(" ("));
  shared_->tell_once(key, why + ": the builtin synthesizer writes these children instead");
}

synthesis_result llm_synthesizer::builtin(const synthesis_request& req, const std::string& why) {
  synthesis_result r = fallback_->write(req);
  if (r.ok) r.summary += " (llm: " + why + ")";
  return r;
}

synthesis_result llm_synthesizer::write(const synthesis_request& req) {
  if (!req.op) {
    synthesis_result r;
    r.error = "no operator in the request";
    return r;
  }
  const std::string task = req.op->name + "/" + (req.variant ? req.variant->name : std::string("?")) + "/" + req.backend;
  if (!shared_->client) {
    shared_->tell_once("none", "no endpoint is configured (llm.endpoints): the builtin synthesizer writes every child");
    return builtin(req, "no endpoint");
  }
  if (std::string why = shared_->client->blocked(task); !why.empty()) {
    tell_fallback(why);
    return builtin(req, why);
  }
  const built_prompt p = builder_.build(req);
  const std::vector<llm::chat_message> messages = {{"system", p.system}, {"user", p.user}};
  llm::chat_outcome o = shared_->client->chat(task, messages);

  llm_call call = call_of(o, messages);
  call.prompt_ms = p.ms;
  for (const auto& d : p.documents) call.documents += d + "\n";

  synthesis_result r;
  if (o.status != llm::chat_status::ok) {
    // Nothing usable came back: the sweep goes on with the builtin child.
    r = builtin(req, std::string(llm::to_string(o.status)) + ": " + o.error.substr(0, 160));
    if (o.attempts > 0) r.calls.push_back(std::move(call));
    if (std::string why = shared_->client->blocked(task); !why.empty()) tell_fallback(why);
    return r;
  }
  const extracted_kernel k = extract_kernel(o.reply.content, parent_code(req), req.backend);
  if (!k.ok) {
    call.status = "unusable";
    call.error = k.unusable;
    r.error = "llm reply unusable: " + k.unusable;
    r.calls.push_back(std::move(call));
    return r;
  }
  r.ok = true;
  r.code = k.code;
  r.origin = "llm:" + o.model;
  r.summary = (k.summary.empty() ? std::string("llm ") + k.how : k.summary);
  r.calls.push_back(std::move(call));
  return r;
}

note_result llm_synthesizer::write_note(const note_request& req) {
  note_result r;
  if (shared_->note_chars <= 0) {
    r.reason = "notes are off (llm.skill_note_chars: 0)";
    return r;
  }
  if (!shared_->client) {
    r.reason = "no endpoint";
    return r;
  }
  if (std::string why = shared_->client->blocked(req.task); !why.empty()) {
    r.reason = why;
    return r;
  }
  const auto t0 = std::chrono::steady_clock::now();
  const auto [system, user] = notes_.build(req, shared_->note_chars);
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  const std::vector<llm::chat_message> messages = {{"system", system}, {"user", user}};
  const llm::chat_outcome o = shared_->client->chat(req.task, messages);
  llm_call call = call_of(o, messages);
  call.purpose = "skill_note";
  call.prompt_ms = ms;
  if (o.status != llm::chat_status::ok) {
    r.status = "failed";
    r.reason = std::string(llm::to_string(o.status)) + ": " + o.error.substr(0, 160);
  } else {
    const checked_note c = check_note(o.reply.content, shared_->note_chars);
    r.status = c.accepted ? "accepted" : "refused";
    r.note = c.note;
    r.reason = c.reason;
    if (!c.accepted) {
      call.status = "unusable";
      call.error = c.reason;
    }
  }
  if (o.attempts > 0) r.calls.push_back(std::move(call));
  return r;
}

}  // namespace kevolve::synth
