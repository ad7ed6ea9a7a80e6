#include "sweep/merge.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

#include "common/fs.h"
#include "common/hash.h"
#include "spec/sweep_yaml.h"
#include "store/record_check.h"

namespace kevolve::sweep {
namespace fs = std::filesystem;

namespace {

// Keys a piece may change: what it sweeps, and how its job runs.
bool piece_key(const std::string& k) {
  for (const char* p : {"sweep.operators", "sweep.backends", "sweep.priorities", "runtime", "checkpoint"})
    if (k.rfind(p, 0) == 0) return true;
  return false;
}

std::map<std::string, std::string> shared_keys(const std::map<std::string, std::string>& flat) {
  std::map<std::string, std::string> out;
  for (const auto& [k, v] : flat)
    if (!piece_key(k)) out[k] = v;
  return out;
}

// Values of a list key in order ("sweep.operators[0]", ...), or the scalar.
std::vector<std::string> list_of(const std::map<std::string, std::string>& flat, const std::string& key,
                                 std::vector<std::string> fallback) {
  if (auto it = flat.find(key); it != flat.end()) return it->second == "[]" ? std::vector<std::string>{} : std::vector{it->second};
  std::vector<std::string> out;
  for (size_t i = 0;; ++i) {
    auto it = flat.find(key + "[" + std::to_string(i) + "]");
    if (it == flat.end()) break;
    out.push_back(it->second);
  }
  return out.empty() ? fallback : out;
}

void add_unique(std::vector<std::string>& to, const std::vector<std::string>& from) {
  for (const auto& x : from)
    if (std::find(to.begin(), to.end(), x) == to.end()) to.push_back(x);
}

// The hash `kevolve run CONFIG --resume` compares, when the config loads here.
std::string compatibility_hash(const std::string& yaml, const std::vector<merge_piece>& pieces) {
  if (auto dir = temp_dir::create("kevolve-merge-")) {
    const fs::path f = dir->path() / "merged.yaml";
    if (write_file_atomic(f, yaml))
      if (auto s = spec::load_sweep(f)) return content_hash({spec::compatibility_text(*s)});
  }
  std::string joined = "merged:";
  for (const auto& p : pieces) joined += p.record.config_hash + ",";
  return content_hash({joined});
}

}  // namespace

expected<store::sweep_record> merge_records(const std::vector<merge_piece>& pieces) {
  if (pieces.empty()) return make_error(errc::invalid_input, "merge: expected at least one store");
  std::vector<std::map<std::string, std::string>> flats;
  for (const auto& p : pieces) {
    auto flat = spec::flatten_sweep_yaml(p.record.config_yaml, p.name + " (its config_yaml)");
    if (!flat) return tl::unexpected(flat.error());
    flats.push_back(std::move(*flat));
  }
  const auto reference = shared_keys(flats[0]);
  for (size_t i = 1; i < pieces.size(); ++i) {
    const auto keys = shared_keys(flats[i]);
    std::set<std::string> all;
    for (const auto& m : {reference, keys})
      for (const auto& kv : m) all.insert(kv.first);
    for (const auto& k : all) {
      auto a = reference.find(k), b = keys.find(k);
      const std::string va = a == reference.end() ? "(not set)" : a->second;
      const std::string vb = b == keys.end() ? "(not set)" : b->second;
      if (va != vb)
        return make_error(errc::invalid_input, "merge: " + pieces[i].name + " and " + pieces[0].name +
                                                   " come from different sweeps: '" + k + "' is " + vb + " in " +
                                                   pieces[i].name + " but " + va + " in " + pieces[0].name +
                                                   " (pieces may differ only in sweep.operators, sweep.backends, "
                                                   "sweep.priorities, runtime and checkpoint)");
    }
  }

  store::sweep_record out;
  out.kevolve_version = pieces[0].record.kevolve_version;
  out.created_at = pieces[0].record.created_at;
  std::map<std::string, std::string> owner;  // task id -> store
  std::vector<std::string> operators, backends;
  int32_t session_offset = 0;
  for (size_t i = 0; i < pieces.size(); ++i) {
    const auto& p = pieces[i];
    out.created_at = std::min(out.created_at, p.record.created_at);
    for (const auto& t : p.record.tasks) {
      auto [it, fresh] = owner.emplace(t.id, p.name);
      if (!fresh)
        return make_error(errc::invalid_input, "merge: task '" + t.id + "' is in " + it->second +
                                                   (it->second == p.name ? " twice" : " and in " + p.name) +
                                                   "; each task must come from exactly one store");
      out.tasks.push_back(t);
    }
    int32_t sessions = 0;
    for (auto r : p.record.ranks) {
      sessions = std::max(sessions, r.session + 1);
      r.session += session_offset;
      out.ranks.push_back(std::move(r));
    }
    session_offset += sessions;
    add_unique(operators, list_of(flats[i], "sweep.operators", {}));
    add_unique(backends, list_of(flats[i], "sweep.backends", {"cpu"}));
  }
  if (std::find(operators.begin(), operators.end(), "all") != operators.end()) operators = {"all"};
  std::string comment = "merged by kevolve merge from:";
  for (const auto& p : pieces) comment += "\n  " + p.name;
  auto yaml = spec::sweep_yaml_with(pieces[0].record.config_yaml, pieces[0].name + " (its config_yaml)", operators,
                                    backends, comment);
  if (!yaml) return tl::unexpected(yaml.error());
  out.config_yaml = std::move(*yaml);
  out.config_hash = compatibility_hash(out.config_yaml, pieces);
  if (const std::string bad = store::check_record(out); !bad.empty())
    return make_error(errc::invalid_input, "merge: the merged record is inconsistent: " + bad);
  return out;
}

}  // namespace kevolve::sweep
