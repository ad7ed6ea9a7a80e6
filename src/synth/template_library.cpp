#include "synth/template_library.h"

#include <algorithm>

#include "common/fs.h"
#include "common/paths.h"
#include "spec/dtype.h"

namespace kevolve::synth {
namespace fs = std::filesystem;

namespace {

std::vector<std::string> string_list(const nlohmann::json& j, const char* key) {
  std::vector<std::string> out;
  if (j.contains(key) && j[key].is_array())
    for (const auto& v : j[key])
      if (v.is_string()) out.push_back(v.get<std::string>());
  return out;
}

expected<template_info> parse_template(const fs::path& file, const std::string& backend) {
  auto text = read_file(file);
  if (!text) return tl::unexpected(text.error());
  const std::string where = file.string();
  nlohmann::json j = nlohmann::json::parse(*text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return make_error(errc::invalid_input, where + ": not a JSON object");
  template_info t;
  t.backend = backend;
  t.name = backend + "/" + file.stem().string();
  t.metadata_file = file;
  if (!j.contains("source") || !j["source"].is_string())
    return make_error(errc::invalid_input, where + ": 'source' must name the .cpp.tmpl file");
  t.source_file = file.parent_path() / j["source"].get<std::string>();
  if (!fs::exists(t.source_file))
    return make_error(errc::not_found, where + ": 'source' " + t.source_file.string() + " does not exist");
  t.description = j.value("description", std::string());
  t.binding = j.value("binding", std::string());
  t.priority = j.value("priority", 0);
  t.dtypes = string_list(j, "dtypes");
  const nlohmann::json serves = j.value("serves", nlohmann::json::object());
  t.operators = string_list(serves, "operators");
  t.op_class = serves.value("class", std::string());
  t.requires_keys = string_list(serves, "requires");
  if (serves.contains("match") && serves["match"].is_object())
    for (auto it = serves["match"].begin(); it != serves["match"].end(); ++it)
      if (it.value().is_string()) t.match[it.key()] = it.value().get<std::string>();
  if (t.operators.empty() && t.op_class.empty())
    return make_error(errc::invalid_input, where + ": 'serves' needs 'operators' or 'class'");
  auto space = param_space::from_json(j.value("params", nlohmann::json::object()), where);
  if (!space) return tl::unexpected(space.error());
  t.space = std::move(*space);
  return t;
}

}  // namespace

bool template_info::serves_by_name(const spec::operator_spec& op) const {
  return std::find(operators.begin(), operators.end(), op.name) != operators.end();
}

bool template_info::serves(const spec::operator_spec& op, const spec::variant* v) const {
  bool ok = serves_by_name(op);
  if (!ok && !op_class.empty() && op_class == op.op_class) {
    ok = true;
    for (const auto& [k, want] : match) {
      auto it = op.template_params.find(k);
      if (it == op.template_params.end() || it->second != want) ok = false;
    }
    for (const auto& k : requires_keys)
      if (!op.template_params.count(k)) ok = false;
  }
  if (!ok || dtypes.empty()) return ok;
  auto variant_ok = [&](const spec::variant& var) {
    for (const auto& [sym, dt] : var.types)
      if (std::find(dtypes.begin(), dtypes.end(), spec::dtype_name(dt)) == dtypes.end()) return false;
    return true;
  };
  if (v) return variant_ok(*v);
  return std::any_of(op.variants.begin(), op.variants.end(), variant_ok);
}

fs::path template_library::default_root() { return data_root() / "knowledge" / "templates"; }

expected<template_library> template_library::load(const fs::path& root) {
  template_library lib;
  lib.root_ = root;
  std::error_code ec;
  if (!fs::is_directory(root, ec)) return make_error(errc::not_found, root.string() + ": no template directory");
  std::vector<fs::path> files;
  for (const auto& backend : fs::directory_iterator(root, ec)) {
    if (!backend.is_directory()) continue;
    for (const auto& f : fs::directory_iterator(backend.path(), ec))
      if (f.path().extension() == ".json") files.push_back(f.path());
  }
  std::sort(files.begin(), files.end());
  std::string problems;
  for (const auto& f : files) {
    auto t = parse_template(f, f.parent_path().filename().string());
    if (t) lib.templates_.push_back(std::move(*t));
    else problems += (problems.empty() ? "" : "\n") + t.error().message;
  }
  if (!problems.empty()) return make_error(errc::invalid_input, problems);
  return lib;
}

const template_info* template_library::find(const std::string& name) const {
  for (const auto& t : templates_)
    if (t.name == name) return &t;
  return nullptr;
}

std::vector<const template_info*> template_library::serving(const spec::operator_spec& op, const spec::variant* v,
                                                            const std::string& backend) const {
  std::vector<const template_info*> out;
  for (const auto& t : templates_)
    if (t.backend == backend && t.serves(op, v)) out.push_back(&t);
  std::stable_sort(out.begin(), out.end(), [&](const template_info* a, const template_info* b) {
    const bool an = a->serves_by_name(op), bn = b->serves_by_name(op);
    if (an != bn) return an;
    if (a->priority != b->priority) return a->priority > b->priority;
    return a->name < b->name;
  });
  return out;
}

}  // namespace kevolve::synth
