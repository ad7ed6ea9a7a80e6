#include "spec/mtia_profile.h"

#include <cmath>
#include <set>

#include <yaml-cpp/yaml.h>

#include "eval/backends/registry.h"
#include "spec/yaml_reader.h"

namespace kevolve::spec {

namespace mtia = emu::mtia;

namespace {

std::string number_text(double v) {
  std::string s = std::to_string(v);
  while (s.find('.') != std::string::npos && (s.back() == '0' || s.back() == '.')) {
    const bool dot = s.back() == '.';
    s.pop_back();
    if (dot) break;
  }
  return s;
}

void read_param(yaml_reader& r, const YAML::Node& params, const mtia::param_info& info, std::size_t i,
                mtia::params& out) {
  const std::string key = std::string("params.") + info.key;
  YAML::Node n = r.child(params, info.key, key, true);
  if (!n.IsDefined()) return;
  if (!n.IsMap()) {
    r.fail(n, key, "must be a map {value, provenance, source}, got " + yaml_reader::describe(n));
    return;
  }
  r.reject_unknown_keys(n, {"value", "provenance", "source"}, key + ".");
  if (auto v = r.number_value(n, "value", key + ".value", true)) {
    if (*v < info.min || *v > info.max)
      r.fail(n["value"], key + ".value",
             "must be between " + number_text(info.min) + " and " + number_text(info.max) + " " + info.unit +
                 ", got " + number_text(*v));
    else if (info.integer && *v != std::floor(*v))
      r.fail(n["value"], key + ".value", "must be a whole number, got " + number_text(*v));
    else
      out.*(info.field) = *v;
  }
  if (auto p = r.string_value(n, "provenance", key + ".provenance", true)) {
    if (*p == "published") out.prov[i] = mtia::provenance::published;
    else if (*p == "derived") out.prov[i] = mtia::provenance::derived;
    else if (*p == "assumed") out.prov[i] = mtia::provenance::assumed;
    else r.fail(n["provenance"], key + ".provenance", "must be published, derived or assumed, got \"" + *p + "\"");
  }
  if (auto s = r.string_value(n, "source", key + ".source", true)) {
    if (s->empty()) r.fail(n["source"], key + ".source", "must name where the number comes from");
    out.source[i] = *s;
  }
}

}  // namespace

expected<mtia::params> load_mtia_profile(const std::filesystem::path& file) {
  YAML::Node root;
  try {
    root = YAML::LoadFile(file.string());
  } catch (const YAML::BadFile&) {
    return make_error(errc::not_found, file.string() + ": cannot open mtia hardware profile");
  } catch (const YAML::Exception& e) {
    return make_error(errc::invalid_input, file.string() + ":" + std::to_string(e.mark.line + 1) + ": invalid YAML: " + e.msg);
  }
  if (!root.IsMap()) return make_error(errc::invalid_input, file.string() + ":1: the document must be a map");
  yaml_reader r(file.string());
  r.reject_unknown_keys(root, {"name", "backend", "params"}, "");
  mtia::params p;
  if (auto v = r.string_value(root, "name", "name", true)) p.name = *v;
  if (auto v = r.string_value(root, "backend", "backend", true)) {
    const auto* d = eval::find_backend(*v);
    if (!d || !d->traits.emulated)
      r.fail(root["backend"], "backend",
             "must be " + eval::backend_names([](const auto& x) { return x.traits.emulated; }, " or ") + ", got \"" + *v + "\"");
  }
  YAML::Node params = r.child(root, "params", "params", true);
  if (params.IsDefined() && !params.IsMap()) r.fail(params, "params", "must be a map of parameters");
  if (params.IsMap()) {
    const auto& table = mtia::param_table();
    std::set<std::string> known;
    for (const auto& row : table) known.insert(row.key);
    r.reject_unknown_keys(params, known, "params.");
    for (std::size_t i = 0; i < table.size(); ++i) read_param(r, params, table[i], i, p);
  }
  if (r.ok()) {
    const std::string bad = mtia::validate(p);
    if (!bad.empty()) r.fail(root, "params", bad);
  }
  if (!r.ok()) {
    std::string all;
    for (const auto& e : r.errors()) all += (all.empty() ? "" : "\n") + e;
    return make_error(errc::invalid_input, all);
  }
  return p;
}

}  // namespace kevolve::spec
