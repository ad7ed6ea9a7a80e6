#include "synth/prompt_builder.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <sstream>

#include "common/fs.h"
#include "common/paths.h"
#include "eval/backends/registry.h"

namespace kevolve::synth {
namespace fs = std::filesystem;

namespace {

int tokens_of(const std::string& s) { return int((s.size() + 3) / 4); }

std::string fixed(double v, int digits) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

std::string first_line(const std::string& code) {
  const auto e = code.find('\n');
  return code.substr(0, std::min<size_t>(e, 160));
}

}  // namespace

// The head and the tail, which is where compiler errors and their causes are.
std::string clip(const std::string& s, size_t chars) {
  if (s.size() <= chars) return s;
  const size_t head = chars * 2 / 3, tail = chars - head;
  return s.substr(0, head) + "\n[... " + std::to_string(s.size() - chars) + " characters cut ...]\n" +
         s.substr(s.size() - tail);
}

std::string verdict_line(const context_item& c) {
  std::string v = eval::to_string(c.result);
  if (c.result == eval::status::ok) {
    v += ", speedup " + fixed(c.fitness, 3) + "x over the baseline";
    if (!c.bottleneck.empty()) v += ", " + c.bottleneck;
    if (c.roofline_fraction > 0) v += ", " + fixed(100 * c.roofline_fraction, 1) + "% of the roofline at the worst shape";
    if (!c.metrics.empty()) {
      v += "\nhardware counters (profiled shape):";
      for (const auto& [name, value] : c.metrics) v += " " + name + " " + fixed(value, 1) + ",";
      v.pop_back();
    }
  } else if (!c.reason.empty()) {
    v += ": " + clip(c.reason, 3000);
  }
  if (!c.compile_diagnostics.empty() && c.compile_diagnostics != c.reason)
    v += "\ncompiler output:\n" + clip(c.compile_diagnostics, 3000);
  return v;
}

fs::path prompt_template::default_file() { return data_root() / "knowledge" / "prompts" / "universal.md"; }

expected<prompt_template> prompt_template::load(const fs::path& file_in, const std::vector<std::string>& required_in) {
  const fs::path file = file_in.empty() ? default_file() : file_in;
  auto text = read_file(file);
  if (!text) return tl::unexpected(text.error());
  prompt_template t;
  std::istringstream in(*text);
  std::string name, body;
  auto flush = [&] {
    if (name.empty()) return;
    while (!body.empty() && body.back() == '\n') body.pop_back();
    t.sections_[name] = body;
  };
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("@@ ", 0) == 0) {
      flush();
      name = line.substr(3);
      body.clear();
    } else {
      body += line + "\n";
    }
  }
  flush();
  const std::vector<std::string> required =
      !required_in.empty() ? required_in
                           : std::vector<std::string>{"system", "task", "abi", "constraints", "mode_reset", "mode_inherit",
                                                      "mode_compare_siblings", "mode_merge", "parent", "knowledge", "skills",
                                                      "reply"};
  for (const std::string& s : required)
    if (!t.sections_.count(s)) return make_error(errc::invalid_input, file.string() + ": missing section '@@ " + s + "'");
  return t;
}

std::string prompt_template::render(const std::string& section, const std::map<std::string, std::string>& vars) const {
  auto it = sections_.find(section);
  if (it == sections_.end()) return "";
  const std::string& s = it->second;
  std::string out;
  out.reserve(s.size() + 1024);
  size_t at = 0;
  while (at < s.size()) {
    const size_t open = s.find("{{", at);
    if (open == std::string::npos) break;
    const size_t close = s.find("}}", open + 2);
    if (close == std::string::npos) break;
    out.append(s, at, open - at);
    auto v = vars.find(s.substr(open + 2, close - open - 2));
    if (v != vars.end()) out += v->second;
    at = close + 2;
  }
  out.append(s, at, std::string::npos);
  return out;
}

std::string default_hardware(const std::string& backend) {
  return eval::hardware_tag_of(backend);
}

prompt_builder::prompt_builder(prompt_template t, std::shared_ptr<const knowledge::knowledge_base> kb, int token_budget)
    : template_(std::move(t)), kb_(std::move(kb)), budget_(token_budget) {}

const std::string& prompt_builder::operator_yaml(const spec::operator_spec& op) {
  auto it = yaml_cache_.find(op.file.string());
  if (it != yaml_cache_.end()) return it->second;
  auto text = read_file(op.file);
  return yaml_cache_[op.file.string()] = text ? *text : "# (the operator's YAML could not be read)";
}

const std::string& prompt_builder::abi_header() {
  if (abi_header_.empty()) {
    auto text = read_file(data_root() / "src" / "abi" / "kevolve" / "abi.h");
    abi_header_ = text ? *text : "/* kevolve/abi.h could not be read */";
  }
  return abi_header_;
}

built_prompt prompt_builder::build(const synthesis_request& req) {
  const auto t0 = std::chrono::steady_clock::now();
  built_prompt out;
  const std::string hardware = default_hardware(req.backend);
  std::map<std::string, std::string> v;
  v["backend"] = req.backend;
  v["hardware"] = hardware;
  v["op_name"] = req.op ? req.op->name : "";
  v["op_class"] = req.op ? req.op->op_class : "";
  v["op_description"] = req.op ? req.op->description : "";
  v["variant"] = req.variant ? req.variant->name : "";
  if (req.op) v["op_yaml"] = operator_yaml(*req.op);
  v["abi_header"] = abi_header();
  const eval::backend_descriptor* be = eval::find_backend(req.backend);
  v["abi_signature"] = (be ? *be : eval::host_backend()).abi_signature;

  // The parent: the context item with the request's parent id.
  const context_item* parent = nullptr;
  for (const auto& c : req.context)
    if (c.id == req.parent) parent = &c;
  if (!parent && req.mode != search::memory_mode::reset && !req.context.empty()) parent = &req.context.front();
  std::vector<const context_item*> others;
  for (const auto& c : req.context)
    if (&c != parent) others.push_back(&c);

  std::string mode_section = "mode_reset";
  if (parent && req.mode == search::memory_mode::inherit) {
    mode_section = "mode_inherit";
    std::string lines;
    for (const context_item* c : others)
      lines += "- node " + std::to_string(c->id) + " (" + first_line(c->code) + "): " + clip(verdict_line(*c), 600) + "\n";
    v["trajectory"] = lines.empty() ? "- (the parent is the first draft)" : lines;
  } else if (parent && req.mode == search::memory_mode::compare_siblings) {
    mode_section = "mode_compare_siblings";
    std::string lines;
    for (size_t i = 0; i < others.size(); ++i) {
      const context_item* c = others[i];
      lines += "### sibling " + std::to_string(i + 1) + " (node " + std::to_string(c->id) + "): " + clip(verdict_line(*c), 600) + "\n";
      // The best and the worst with code, the others by verdict only.
      if (i == 0 || i + 1 == others.size()) lines += "```cpp\n" + clip(c->code, 6000) + "\n```\n";
    }
    v["siblings"] = lines.empty() ? "(none evaluated yet)" : lines;
  } else if (parent && req.mode == search::memory_mode::merge && !others.empty()) {
    mode_section = "mode_merge";
    v["partner"] = "Verdict: " + verdict_line(*others.front()) + "\n\n```cpp\n" + clip(others.front()->code, 12000) + "\n```";
  }
  if (parent) {
    v["parent_code"] = parent->code;
    v["parent_verdict"] = verdict_line(*parent);
  }

  // Diagnosis, then retrieval.
  knowledge::verdict_signals sig;
  sig.has_parent = parent != nullptr;
  if (parent) {
    sig.status = eval::to_string(parent->result);
    sig.bottleneck = parent->bottleneck;
    sig.roofline_fraction = parent->roofline_fraction;
    sig.diagnostics = parent->compile_diagnostics + "\n" + parent->reason;
  }
  out.triggers = knowledge::diagnose(sig);
  std::string diagnosis;
  for (const auto& t : out.triggers) diagnosis += (diagnosis.empty() ? "" : ", ") + t;
  v["diagnosis"] = diagnosis;

  out.system = template_.render("system", v);
  std::string fixed_part = template_.render("task", v) + "\n\n" + template_.render("abi", v) + "\n\n" +
                           template_.render(mode_section, v) + "\n\n" + (parent ? template_.render("parent", v) + "\n\n" : "");
  const std::string reply = template_.render("reply", v);
  int left = budget_ - tokens_of(out.system) - tokens_of(fixed_part) - tokens_of(reply) - 50;

  // Constraints always; then knowledge and skills while they fit.
  std::string constraints, knowledge, skills;
  auto add_doc = [&](const knowledge::document& d, std::string& into, int cap) {
    if (left < 150) return;
    const std::string header = "### " + d.title + " (" + d.path + ")\n\n";
    const int room = std::min(cap, left) - tokens_of(header);
    if (room < 100) return;
    std::string body = d.body;
    if (tokens_of(body) > room) body = body.substr(0, size_t(room) * 4) + "\n[...]";
    into += header + body + "\n";
    left -= tokens_of(header) + tokens_of(body);
    out.documents.push_back(d.path);
  };
  if (kb_) {
    for (const auto* d : kb_->constraints(req.backend)) add_doc(*d, constraints, 3000);
    knowledge::query q;
    q.backend = req.backend;
    q.hardware = hardware;
    q.op_class = req.op ? req.op->op_class : "";
    q.triggers = out.triggers;
    q.text = v["op_name"] + " " + v["op_class"] + " " + diagnosis + " " + sig.bottleneck + " " + clip(sig.diagnostics, 400);
    q.levels = {"guide", "hardware"};
    q.limit = 4;
    for (const auto& h : kb_->search(q)) add_doc(*h.doc, knowledge, 2500);
    q.levels = {"skill"};
    q.triggers.clear();
    q.limit = 2;
    for (const auto& h : kb_->search(q)) add_doc(*h.doc, skills, 800);
  }
  v["constraints"] = constraints;
  v["knowledge"] = knowledge;
  v["skills"] = skills;

  out.user = template_.render("task", v) + "\n\n" + template_.render("abi", v) + "\n\n";
  if (!constraints.empty()) out.user += template_.render("constraints", v) + "\n\n";
  out.user += template_.render(mode_section, v) + "\n\n";
  if (parent) out.user += template_.render("parent", v) + "\n\n";
  if (!knowledge.empty()) out.user += template_.render("knowledge", v) + "\n\n";
  if (!skills.empty()) out.user += template_.render("skills", v) + "\n\n";
  out.user += reply + "\n";
  out.tokens = tokens_of(out.system) + tokens_of(out.user);
  out.over_budget = out.tokens > budget_;
  out.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return out;
}

}  // namespace kevolve::synth
