#include "synth/note_prompt.h"

#include <map>

#include "common/paths.h"

namespace kevolve::synth {

std::filesystem::path note_prompt::default_file() { return data_root() / "knowledge" / "prompts" / "skill_note.md"; }

expected<note_prompt> note_prompt::load(const std::filesystem::path& file) {
  auto t = prompt_template::load(file.empty() ? default_file() : file, {"system", "user"});
  if (!t) return tl::unexpected(t.error());
  return note_prompt(std::move(*t));
}

std::pair<std::string, std::string> note_prompt::build(const note_request& r, int max_chars) const {
  std::map<std::string, std::string> v;
  v["backend"] = r.backend;
  v["hardware"] = r.hardware;
  v["op_name"] = r.op ? r.op->name : "";
  v["op_class"] = r.op ? r.op->op_class : "";
  v["variant"] = r.variant ? r.variant->name : "";
  v["parent_node"] = std::to_string(r.parent.id);
  v["parent_origin"] = r.parent_origin;
  v["parent_verdict"] = verdict_line(r.parent);
  v["parent_code"] = clip(r.parent.code, 12000);
  v["child_node"] = std::to_string(r.child.id);
  v["child_origin"] = r.child_origin;
  v["child_verdict"] = verdict_line(r.child);
  v["child_code"] = clip(r.child.code, 12000);
  v["measurements"] = r.measurements.empty() ? "(none)" : clip(r.measurements, 4000);
  v["max_chars"] = std::to_string(max_chars);
  return {template_.render("system", v), template_.render("user", v)};
}

checked_note check_note(const std::string& reply, int max_chars) {
  checked_note c;
  const size_t first = reply.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) {
    c.reason = "the reply is empty";
    return c;
  }
  const std::string note = reply.substr(first, reply.find_last_not_of(" \t\r\n") - first + 1);
  size_t chars = 0;
  for (unsigned char ch : note) chars += (ch & 0xC0) != 0x80;
  if (chars > size_t(max_chars)) {
    c.reason = "the note has " + std::to_string(chars) + " characters, over the limit of " + std::to_string(max_chars) +
               " (llm.skill_note_chars)";
    return c;
  }
  c.accepted = true;
  c.note = note;
  return c;
}

}  // namespace kevolve::synth
