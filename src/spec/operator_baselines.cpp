#include "spec/operator_baselines.h"

#include <algorithm>
#include <mutex>
#include <set>

#include "common/log.h"
#include "eval/backends/registry.h"

namespace kevolve::spec {
namespace fs = std::filesystem;

namespace {

std::string join(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& x : v) out += (out.empty() ? "" : ", ") + x;
  return out;
}

// A backend whose baseline candidates are timed against (hip_on_cuda uses cuda's).
bool has_own_baseline(const eval::backend_descriptor& d) { return d.baseline_of == d.name; }

void read_one(yaml_reader& r, const YAML::Node& b, const std::string& key, const fs::path& file,
              const eval::backend_descriptor& be, baseline_spec& out) {
  if (!b.IsMap()) {
    r.fail(b, key, "must be a map {name, source, libraries}, got " + yaml_reader::describe(b));
    return;
  }
  r.reject_unknown_keys(b, {"name", "source", "libraries"}, key + ".");
  auto name = r.string_value(b, "name", key + ".name", true);
  auto source = r.string_value(b, "source", key + ".source", true);
  auto libs = r.string_list(b, "libraries", key + ".libraries", false);
  if (name) out.name = *name;
  if (source) {
    out.source = file.parent_path() / *source;
    if (!fs::is_regular_file(out.source))
      r.fail(b["source"], key + ".source",
             "must name an existing file relative to the YAML, got \"" + out.source.string() + "\" (not found)");
  }
  if (libs) out.libraries = *libs;
  const auto& linkable = be.linkable_libraries;
  for (const auto& l : out.libraries)
    if (std::find(linkable.begin(), linkable.end(), l) == linkable.end())
      r.fail(b["libraries"], key + ".libraries",
             "names library \"" + l + "\", which the " + be.name + " backend's compile recipe cannot link (it links: " +
                 (linkable.empty() ? std::string("none") : join(linkable)) + ")");
}

}  // namespace

std::set<std::string> baseline_keys() {
  std::set<std::string> keys = {"baselines"};
  for (const auto* d : eval::registered_backends())
    if (!d->legacy_baseline_key.empty()) keys.insert(d->legacy_baseline_key);
  return keys;
}

void note_deprecated_baselines(const fs::path& file, const deprecated_baselines& keys) {
  if (keys.empty()) return;
  static std::mutex m;
  static std::set<std::string> noted;
  std::lock_guard<std::mutex> lock(m);
  if (!noted.insert(fs::absolute(file).lexically_normal().string()).second) return;
  std::string names, map;
  for (size_t i = 0; i < keys.size(); ++i) {
    names += (i ? ", '" : "'") + keys[i].first + "'";
    map += (i ? ", " : "") + keys[i].second + ": {...}";
  }
  log::warn("{}: {} {} deprecated: write 'baselines: {{{}}}' (config/operators/README.md)", file.string(), names,
            keys.size() == 1 ? "is" : "are", map);
}

deprecated_baselines read_baselines(yaml_reader& r, const YAML::Node& root, const fs::path& file, operator_spec& op) {
  YAML::Node map = r.child(root, "baselines", "baselines", false);
  if (map.IsDefined() && !map.IsMap()) {
    r.fail(map, "baselines", "must map backend names to {name, source, libraries}, got " + yaml_reader::describe(map));
    map = YAML::Node();
  }
  deprecated_baselines legacy;
  if (map.IsDefined())
    for (const auto& kv : map) {
      const std::string name = kv.first.Scalar();
      const eval::backend_descriptor* d = eval::find_backend(name);
      if (!d || !has_own_baseline(*d)) {
        r.fail(kv.first, "baselines." + name,
               "names no backend with a baseline (backends: " + eval::backend_names(has_own_baseline) + ")");
        continue;
      }
      read_one(r, kv.second, "baselines." + name, file, *d, op.baselines[name]);
    }
  for (const auto* d : eval::registered_backends()) {
    if (d->legacy_baseline_key.empty()) continue;
    YAML::Node b = r.child(root, d->legacy_baseline_key, d->legacy_baseline_key, false);
    if (!b.IsDefined()) continue;
    if (map.IsDefined() && map[d->name].IsDefined()) {
      r.fail(b, d->legacy_baseline_key, "and 'baselines." + d->name + "' are both given: keep 'baselines." + d->name + "'");
      continue;
    }
    legacy.emplace_back(d->legacy_baseline_key, d->name);
    read_one(r, b, d->legacy_baseline_key, file, *d, op.baselines[d->name]);
  }
  const eval::backend_descriptor& host = eval::host_backend();
  if (auto it = op.baselines.find(host.name); it != op.baselines.end()) op.baseline = it->second;
  else if (op.has_torch() && op.torch_reference()) {
    // PyTorch is the reference, its fp32 run the stand-in at large shapes and
    // the yardstick: the plain baselines are optional.
  } else if (!map.IsDefined()) r.child(root, host.legacy_baseline_key, host.legacy_baseline_key, true);  // "is required"
  else r.fail(map, "baselines." + host.name, "is required: the " + host.name + " baseline stands in for the reference at large shapes");

  if (auto libs = r.string_list(root, "allowed_libraries", "allowed_libraries", false)) {
    std::vector<std::string> known;
    for (const auto* d : eval::registered_backends())
      for (const auto& l : d->linkable_libraries)
        if (std::find(known.begin(), known.end(), l) == known.end()) known.push_back(l);
    for (const auto& l : *libs)
      if (std::find(known.begin(), known.end(), l) == known.end())
        r.fail(root["allowed_libraries"], "allowed_libraries",
               "names library \"" + l + "\", which no backend's compile recipe links (known: " + join(known) + ")");
    op.allowed_libraries = *libs;
  }
  return legacy;
}

}  // namespace kevolve::spec
