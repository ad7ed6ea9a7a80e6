#include "store/store_rows.h"

#include <nlohmann/json.hpp>

#include "store/record_check.h"

namespace kevolve::store {

using search::node;

std::string metrics_text(const std::map<std::string, double>& metrics) {
  if (metrics.empty()) return "";
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [name, value] : metrics) j[name] = value;
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);  // a name that is not UTF-8 never throws
}

std::string parse_metrics(const std::string& text, std::map<std::string, double>& out) {
  out.clear();
  if (text.empty()) return "";
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (!j.is_object()) return "expected a JSON object of numbers, got '" + text.substr(0, 80) + "'";
  for (const auto& [name, value] : j.items()) {
    if (!value.is_number()) return "'" + name + "' is " + value.dump() + ", expected a number";
    out[name] = value.get<double>();
  }
  return "";
}

uint64_t text_bytes(const task_record& t) {
  uint64_t n = 0;
  for (const node& x : t.search.nodes.nodes()) n += x.code.size() + x.origin.size() + x.reason.size();
  for (const shape_measurement& m : t.measurements)
    n += m.shape.size() + m.status.size() + m.bottleneck.size() + m.profile.size() + metrics_text(m.metrics).size() + m.bound.size();
  return n;
}

task_tables flatten(const task_record& t, const std::function<uint64_t(std::string_view)>& append_text) {
  task_tables out;
  const std::vector<node>& nodes = t.search.nodes.nodes();
  size_t context_count = 0;
  for (const node& n : nodes) context_count += n.context.size();
  out.context.reserve(context_count);
  out.nodes.resize(nodes.size());
  for (size_t k = 0; k < nodes.size(); ++k) {
    const node& n = nodes[k];
    node_row& w = out.nodes[k];
    w.id = n.id;
    w.parent = n.parent;
    w.depth = n.depth;
    w.mode = int32_t(n.mode);
    w.state = int32_t(n.state);
    w.status = int32_t(n.result);
    w.fitness = n.fitness;
    w.created_s = n.created_s;
    w.finished_s = n.finished_s;
    w.rank = n.rank;
    w.visits = n.visits;
    w.value_sum = n.value_sum;
    w.code_offset = append_text(n.code);
    w.code_length = n.code.size();
    w.origin_offset = append_text(n.origin);
    w.origin_length = n.origin.size();
    w.reason_offset = append_text(n.reason);
    w.reason_length = n.reason.size();
    w.context_offset = out.context.size();
    w.context_length = n.context.size();
    out.context.insert(out.context.end(), n.context.begin(), n.context.end());
  }
  out.measurements.resize(t.measurements.size());
  for (size_t k = 0; k < t.measurements.size(); ++k) {
    const shape_measurement& m = t.measurements[k];
    measurement_row& w = out.measurements[k];
    w.node = m.node;
    w.holdout = m.holdout ? 1 : 0;
    w.max_abs_error = m.max_abs_error;
    w.candidate_median_s = m.candidate_median_s;
    w.candidate_p10_s = m.candidate_p10_s;
    w.candidate_p90_s = m.candidate_p90_s;
    w.baseline_median_s = m.baseline_median_s;
    w.speedup = m.speedup;
    w.achieved_gbs = m.achieved_gbs;
    w.achieved_gflops = m.achieved_gflops;
    w.roofline_fraction = m.roofline_fraction;
    w.attainable_fraction = m.attainable_fraction;
    w.torch_eager_median_s = m.torch_eager_median_s;
    w.torch_compile_median_s = m.torch_compile_median_s;
    w.shape_offset = append_text(m.shape);
    w.shape_length = m.shape.size();
    w.status_offset = append_text(m.status);
    w.status_length = m.status.size();
    w.bottleneck_offset = append_text(m.bottleneck);
    w.bottleneck_length = m.bottleneck.size();
    w.profile_offset = append_text(m.profile);
    w.profile_length = m.profile.size();
    const std::string metrics = metrics_text(m.metrics);
    w.metrics_offset = append_text(metrics);
    w.metrics_length = metrics.size();
    w.bound_offset = append_text(m.bound);
    w.bound_length = m.bound.size();
  }
  return out;
}

namespace {

// Reads one string of the blob after checking its range; "" in `error` when fine.
class text_source {
 public:
  text_source(uint64_t size, const std::function<std::string(uint64_t, uint64_t)>& read) : size_(size), read_(read) {}

  bool get(uint64_t offset, uint64_t length, const std::string& owner, std::string& out, std::string& error) const {
    if (offset > size_ || length > size_ - offset) {
      error = owner + ": byte range [" + std::to_string(offset) + ", +" + std::to_string(length) +
              ") is past the end of text (" + std::to_string(size_) + " bytes)";
      return false;
    }
    out = length ? read_(offset, length) : std::string();
    return true;
  }

 private:
  uint64_t size_;
  const std::function<std::string(uint64_t, uint64_t)>& read_;
};

}  // namespace

std::string unflatten(const task_tables& tables, uint64_t text_size,
                      const std::function<std::string(uint64_t, uint64_t)>& read_text, task_record& t) {
  const text_source text(text_size, read_text);
  std::string error;
  std::vector<node> nodes(tables.nodes.size());
  for (size_t k = 0; k < nodes.size(); ++k) {
    const node_row& w = tables.nodes[k];
    node& n = nodes[k];
    const std::string owner = "nodes: node " + std::to_string(k);
    n.id = w.id;
    n.parent = w.parent;
    n.depth = w.depth;
    n.mode = search::memory_mode(w.mode);  // values are checked by check_task
    n.state = search::node_state(w.state);
    n.result = eval::status(w.status);
    n.fitness = w.fitness;
    n.created_s = w.created_s;
    n.finished_s = w.finished_s;
    n.rank = w.rank;
    n.visits = w.visits;
    n.value_sum = w.value_sum;
    if (!text.get(w.code_offset, w.code_length, owner + " code", n.code, error) ||
        !text.get(w.origin_offset, w.origin_length, owner + " origin", n.origin, error) ||
        !text.get(w.reason_offset, w.reason_length, owner + " reason", n.reason, error))
      return error;
    const uint64_t size = tables.context.size();
    if (w.context_offset > size || w.context_length > size - w.context_offset)
      return owner + ": context range [" + std::to_string(w.context_offset) + ", +" + std::to_string(w.context_length) +
             ") is past the end of context (" + std::to_string(size) + " entries)";
    const auto first = tables.context.begin() + long(w.context_offset);
    n.context.assign(first, first + long(w.context_length));
  }
  t.measurements.resize(tables.measurements.size());
  for (size_t k = 0; k < tables.measurements.size(); ++k) {
    const measurement_row& w = tables.measurements[k];
    shape_measurement& m = t.measurements[k];
    const std::string owner = "measurements: row " + std::to_string(k);
    m.node = w.node;
    m.holdout = w.holdout != 0;
    m.max_abs_error = w.max_abs_error;
    m.candidate_median_s = w.candidate_median_s;
    m.candidate_p10_s = w.candidate_p10_s;
    m.candidate_p90_s = w.candidate_p90_s;
    m.baseline_median_s = w.baseline_median_s;
    m.speedup = w.speedup;
    m.achieved_gbs = w.achieved_gbs;
    m.achieved_gflops = w.achieved_gflops;
    m.roofline_fraction = w.roofline_fraction;
    m.attainable_fraction = w.attainable_fraction;
    m.torch_eager_median_s = w.torch_eager_median_s;
    m.torch_compile_median_s = w.torch_compile_median_s;
    if (!text.get(w.shape_offset, w.shape_length, owner + " shape", m.shape, error) ||
        !text.get(w.status_offset, w.status_length, owner + " status", m.status, error) ||
        !text.get(w.bottleneck_offset, w.bottleneck_length, owner + " bottleneck", m.bottleneck, error) ||
        !text.get(w.profile_offset, w.profile_length, owner + " profile", m.profile, error) ||
        !text.get(w.bound_offset, w.bound_length, owner + " bound", m.bound, error))
      return error;
    std::string metrics;
    if (!text.get(w.metrics_offset, w.metrics_length, owner + " metrics", metrics, error)) return error;
    if (auto bad = parse_metrics(metrics, m.metrics); !bad.empty()) return owner + " metrics: " + bad;
  }
  link_children(nodes);
  t.search.nodes = search::tree::from_nodes(std::move(nodes));
  return "";
}

}  // namespace kevolve::store

namespace kevolve::store {

uint64_t llm_text_bytes(const task_record& t) {
  uint64_t n = 0;
  for (const llm_exchange& x : t.llm)
    n += x.endpoint.size() + x.model.size() + x.status.size() + x.error.size() + x.prompt.size() + x.reply.size() +
         x.documents.size();
  return n;
}

std::vector<llm_row> flatten_llm(const task_record& t, const std::function<uint64_t(std::string_view)>& append_text) {
  std::vector<llm_row> out(t.llm.size());
  for (size_t k = 0; k < t.llm.size(); ++k) {
    const llm_exchange& x = t.llm[k];
    llm_row& w = out[k];
    w.node = x.node;
    w.purpose = x.purpose == kLlmPurposes[1] ? 1 : 0;  // check_task refuses any other
    w.attempts = x.attempts;
    w.tokens_estimated = x.tokens_estimated;
    w.prompt_tokens = x.prompt_tokens;
    w.completion_tokens = x.completion_tokens;
    w.latency_s = x.latency_s;
    w.total_s = x.total_s;
    w.cost = x.cost;
    w.prompt_ms = x.prompt_ms;
    auto put = [&](const std::string& s, uint64_t& offset, uint64_t& length) {
      offset = append_text(s);
      length = s.size();
    };
    put(x.endpoint, w.endpoint_offset, w.endpoint_length);
    put(x.model, w.model_offset, w.model_length);
    put(x.status, w.status_offset, w.status_length);
    put(x.error, w.error_offset, w.error_length);
    put(x.prompt, w.prompt_offset, w.prompt_length);
    put(x.reply, w.reply_offset, w.reply_length);
    put(x.documents, w.documents_offset, w.documents_length);
  }
  return out;
}

std::string unflatten_llm(const std::vector<llm_row>& rows, uint64_t text_size,
                          const std::function<std::string(uint64_t, uint64_t)>& read_text, task_record& t) {
  const text_source text(text_size, read_text);
  std::string error;
  const int64_t nodes = int64_t(t.search.nodes.nodes().size());
  t.llm.resize(rows.size());
  for (size_t k = 0; k < rows.size(); ++k) {
    const llm_row& w = rows[k];
    llm_exchange& x = t.llm[k];
    const std::string owner = "llm: row " + std::to_string(k);
    if (w.node < 1 || w.node >= nodes)
      return owner + " names node " + std::to_string(w.node) + ", expected a node of the task (1.." + std::to_string(nodes - 1) + ")";
    if (w.purpose < 0 || w.purpose > 1)
      return owner + " has purpose " + std::to_string(w.purpose) + ", expected 0 (kernel) or 1 (skill_note)";
    x.node = w.node;
    x.purpose = kLlmPurposes[w.purpose];
    x.attempts = w.attempts;
    x.tokens_estimated = w.tokens_estimated;
    x.prompt_tokens = w.prompt_tokens;
    x.completion_tokens = w.completion_tokens;
    x.latency_s = w.latency_s;
    x.total_s = w.total_s;
    x.cost = w.cost;
    x.prompt_ms = w.prompt_ms;
    if (!text.get(w.endpoint_offset, w.endpoint_length, owner + " endpoint", x.endpoint, error) ||
        !text.get(w.model_offset, w.model_length, owner + " model", x.model, error) ||
        !text.get(w.status_offset, w.status_length, owner + " status", x.status, error) ||
        !text.get(w.error_offset, w.error_length, owner + " error", x.error, error) ||
        !text.get(w.prompt_offset, w.prompt_length, owner + " prompt", x.prompt, error) ||
        !text.get(w.reply_offset, w.reply_length, owner + " reply", x.reply, error) ||
        !text.get(w.documents_offset, w.documents_length, owner + " documents", x.documents, error))
      return error;
  }
  return "";
}

uint64_t skills_text_bytes(const task_record& t) {
  uint64_t n = 0;
  for (const skill_note& k : t.skills) n += k.note.size() + k.reason.size() + k.hardware.size() + k.evidence.size();
  return n;
}

std::vector<skill_row> flatten_skills(const task_record& t, const std::function<uint64_t(std::string_view)>& append_text) {
  std::vector<skill_row> out(t.skills.size());
  for (size_t k = 0; k < t.skills.size(); ++k) {
    const skill_note& x = t.skills[k];
    skill_row& w = out[k];
    w.node = x.node;
    w.parent = x.parent;
    w.exchange = x.exchange;
    w.accepted = x.accepted ? 1 : 0;
    w.parent_fitness = x.parent_fitness;
    w.child_fitness = x.child_fitness;
    auto put = [&](const std::string& s, uint64_t& offset, uint64_t& length) {
      offset = append_text(s);
      length = s.size();
    };
    put(x.note, w.note_offset, w.note_length);
    put(x.reason, w.reason_offset, w.reason_length);
    put(x.hardware, w.hardware_offset, w.hardware_length);
    put(x.evidence, w.evidence_offset, w.evidence_length);
  }
  return out;
}

std::string unflatten_skills(const std::vector<skill_row>& rows, uint64_t text_size,
                             const std::function<std::string(uint64_t, uint64_t)>& read_text, task_record& t) {
  const text_source text(text_size, read_text);
  std::string error;
  t.skills.resize(rows.size());
  for (size_t k = 0; k < rows.size(); ++k) {
    const skill_row& w = rows[k];
    skill_note& x = t.skills[k];
    const std::string owner = "skills: row " + std::to_string(k);
    x.node = w.node;  // node, parent and exchange are checked by check_task
    x.parent = w.parent;
    x.exchange = w.exchange;
    x.accepted = w.accepted != 0;
    x.parent_fitness = w.parent_fitness;
    x.child_fitness = w.child_fitness;
    if (!text.get(w.note_offset, w.note_length, owner + " note", x.note, error) ||
        !text.get(w.reason_offset, w.reason_length, owner + " reason", x.reason, error) ||
        !text.get(w.hardware_offset, w.hardware_length, owner + " hardware", x.hardware, error) ||
        !text.get(w.evidence_offset, w.evidence_length, owner + " evidence", x.evidence, error))
      return error;
  }
  return "";
}

}  // namespace kevolve::store
