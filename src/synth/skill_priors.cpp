#include "synth/skill_priors.h"

#include <algorithm>

#include "common/fs.h"
#include "knowledge/skills.h"
#include "synth/template_library.h"

namespace kevolve::synth {
namespace fs = std::filesystem;

expected<skill_priors> skill_priors::load(const fs::path& dir) {
  skill_priors out;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return out;
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.path().extension() == ".md") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  for (const auto& f : files) {
    auto text = read_file(f);
    if (!text) return tl::unexpected(text.error());
    if (auto a = out.add(*text, f.string()); !a) return tl::unexpected(a.error());
  }
  return out;
}

expected<void> skill_priors::add(const std::string& text, const std::string& file) {
  const std::string fence = std::string("```") + knowledge::kSkillBlock + "\n";
  const size_t at = text.find(fence);
  if (at == std::string::npos) return {};
  const size_t begin = at + fence.size();
  const size_t end = text.find("\n```", begin - 1);
  const size_t line = size_t(std::count(text.begin(), text.begin() + long(at), '\n')) + 1;
  const std::string where = file + ":" + std::to_string(line) + ": '" + knowledge::kSkillBlock + "' block";
  if (end == std::string::npos) return make_error(errc::invalid_input, where + " has no closing ```");
  const auto j = nlohmann::json::parse(text.substr(begin, end - begin), nullptr, false);
  if (!j.is_object()) return make_error(errc::invalid_input, where + " must be one JSON object");
  skill_prior p;
  p.file = fs::path(file).filename().string();
  auto text_key = [&](const char* key, std::string& into, bool required) -> expected<void> {
    if (!j.contains(key)) {
      if (required) return make_error(errc::invalid_input, where + ": '" + key + "' is missing");
      return {};
    }
    if (!j[key].is_string()) return make_error(errc::invalid_input, where + ": '" + key + "' must be a string");
    into = j[key].get<std::string>();
    return {};
  };
  for (auto [key, into, required] : {std::tuple{"operator", &p.op, false}, std::tuple{"class", &p.op_class, false},
                                     std::tuple{"variant", &p.variant, false}, std::tuple{"backend", &p.backend, true},
                                     std::tuple{"template", &p.template_name, true}})
    if (auto r = text_key(key, *into, required); !r) return r;
  if (!j.contains("params") || !j["params"].is_object())
    return make_error(errc::invalid_input, where + ": 'params' must be an object of template parameters");
  p.params = j["params"];
  if (j.contains("fitness")) {
    if (!j["fitness"].is_number()) return make_error(errc::invalid_input, where + ": 'fitness' must be a number");
    p.fitness = j["fitness"].get<double>();
  }
  priors_.push_back(std::move(p));
  return {};
}

std::vector<skill_start> skill_priors::starts(const spec::operator_spec& op, const std::string& backend,
                                              const std::vector<const template_info*>& serving) const {
  std::vector<skill_start> out;
  if (serving.empty()) return out;
  for (const auto& p : priors_) {
    if (p.backend != backend) continue;
    skill_start s;
    s.prior = &p;
    for (const template_info* t : serving)
      if (t->name == p.template_name) s.t = t;
    s.same_template = s.t != nullptr;
    // Another template of the same class: carry the parameter values over.
    if (!s.t) {
      if (p.op_class.empty() || p.op_class != op.op_class) continue;
      s.t = serving.front();
    }
    s.params = s.t->space.normalize(p.params);
    out.push_back(std::move(s));
  }
  std::stable_sort(out.begin(), out.end(), [&op](const skill_start& a, const skill_start& b) {
    if (a.same_template != b.same_template) return a.same_template;
    const bool an = a.prior->op == op.name, bn = b.prior->op == op.name;
    if (an != bn) return an;
    if (a.prior->fitness != b.prior->fitness) return a.prior->fitness > b.prior->fitness;
    return a.prior->file < b.prior->file;
  });
  std::vector<skill_start> distinct;
  for (auto& s : out) {
    bool seen = false;
    for (const auto& d : distinct) seen = seen || (d.t == s.t && d.params == s.params);
    if (!seen) distinct.push_back(std::move(s));
  }
  return distinct;
}

}  // namespace kevolve::synth
