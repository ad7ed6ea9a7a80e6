#include "eval/backends/compile_cache.h"

#include <fstream>

#include <nlohmann/json.hpp>

#include "common/fs.h"
#include "common/hash.h"
#include "common/subprocess.h"
#include "eval/elf_inspect.h"

namespace kevolve::eval {
namespace fs = std::filesystem;

namespace {

bool is_library(const std::string& flag) { return flag.rfind("-l", 0) == 0; }

// Paths of the scratch directory mean nothing to the reader.
std::string replace_all(std::string text, const std::string& from, const std::string& to) {
  if (from.empty()) return text;
  for (size_t pos = 0; (pos = text.find(from, pos)) != std::string::npos; pos += to.size()) text.replace(pos, from.size(), to);
  return text;
}

// The record beside an entry's artefacts. False when missing or damaged (the
// entry is then rebuilt). Entries of the cpu compiler carry vectorized_loops,
// those of the GPU compilers a target; both read either.
bool load_record(const fs::path& meta, compile_report& r, bool& ok) {
  auto m = read_file(meta);
  if (!m) return false;
  try {
    auto j = nlohmann::json::parse(*m);
    ok = j.at("ok").get<bool>();
    r.seconds = j.at("seconds").get<double>();
    r.diagnostics = j.at("diagnostics").get<std::string>();
    r.code_bytes = j.at("code_bytes").get<size_t>();
    r.vectorized_loops = j.value("vectorized_loops", 0);
    return true;
  } catch (const nlohmann::json::exception&) {
    return false;
  }
}

expected<void> save_record(const fs::path& meta, const compile_report& r) {
  nlohmann::json j = {{"ok", true},
                      {"seconds", r.seconds},
                      {"diagnostics", r.diagnostics},
                      {"code_bytes", r.code_bytes},
                      {"vectorized_loops", r.vectorized_loops},
                      {"target", r.target}};
  return write_file_atomic(meta, j.dump());
}

}  // namespace

std::vector<std::string> compile_recipe::argv(const compile_scratch& s) const {
  std::vector<std::string> a = {compiler};
  a.insert(a.end(), leading.begin(), leading.end());
  for (const auto& f : flags)
    if (!is_library(f)) a.push_back(f);
  if (scratch_args)
    for (auto& f : scratch_args(s)) a.push_back(std::move(f));
  for (const std::string& f : {s.source.string(), std::string("-o"), s.output.string()}) a.push_back(f);
  for (const auto& f : flags)
    if (is_library(f)) a.push_back(f);
  return a;
}

std::string compile_timeout_reason(std::chrono::seconds limit) {
  return "compilation exceeded " + std::to_string(limit.count()) + " s and was killed";
}

compile_cache::compile_cache(fs::path dir, std::chrono::seconds timeout) : dir_(std::move(dir)), timeout_(timeout) {}

std::string compile_cache::key(const std::string& source, const compile_recipe& recipe) {
  std::string flag_text;
  for (const auto& f : recipe.flags) flag_text += f + " ";
  std::vector<std::string> parts = {source, flag_text, recipe.toolchain};
  parts.insert(parts.end(), recipe.key_extra.begin(), recipe.key_extra.end());
  return content_hash(parts);
}

// The record is written last, so its presence (with every artefact) means complete.
bool compile_cache::lookup(const compile_recipe& recipe, compiled_kernel& k) const {
  bool ok = false;
  if (!load_record(entry(k.hash, ".json"), k.report, ok) || !ok) return false;
  if (!fs::exists(entry(k.hash, ".so"))) return false;
  for (const auto& a : recipe.artefacts)
    if (!fs::exists(entry(k.hash, a.second))) return false;
  k.ok = true;
  k.library = entry(k.hash, ".so");
  k.report.cached = true;
  if (recipe.parse_diagnostics) recipe.parse_diagnostics(k.report);
  return true;
}

expected<compiled_kernel> compile_cache::compile(const std::string& source, const compile_recipe& recipe,
                                                 const std::string& display_name) const {
  compiled_kernel k;
  k.hash = key(source, recipe);
  k.report.target = recipe.target;
  if (lookup(recipe, k)) return k;
  k.report = compile_report{};
  k.report.target = recipe.target;

  std::error_code ec;
  fs::create_directories(dir_, ec);
  if (ec) return make_error(errc::io_error, "cannot create compile cache " + dir_.string() + ": " + ec.message());
  auto work = temp_dir::create(recipe.scratch_prefix);
  if (!work) return tl::unexpected(work.error());
  const compile_scratch s{work->path(), work->path() / recipe.source_file, work->path() / "kernel.so",
                          work->path() / "exports.map"};
  {
    std::ofstream(s.source, std::ios::binary) << source;
    // Only kevolve_kernel is visible: a candidate cannot interpose anything.
    std::ofstream(s.exports) << "{ global: kevolve_kernel; local: *; };\n";
  }

  subprocess_options opts;
  opts.timeout = timeout_;
  opts.cwd = s.dir.string();
  opts.max_output_bytes = recipe.max_output_bytes;
  auto r = run_subprocess(recipe.argv(s), opts);
  if (!r) return make_error(errc::toolchain_error, "cannot run " + recipe.compiler + ": " + r.error().message);
  if (r->exit_code == 127) return make_error(errc::toolchain_error, "cannot run " + recipe.compiler + ": not found");
  k.report.seconds = r->seconds;
  k.report.diagnostics = replace_all(r->output, s.source.string(), display_name);
  if (recipe.parse_diagnostics) recipe.parse_diagnostics(k.report);
  if (r->timed_out) {
    k.failure = compile_timeout_reason(timeout_);
    k.report.diagnostics = k.failure + "\n" + k.report.diagnostics;
    return k;
  }
  if (recipe.refuse) k.failure = recipe.refuse(k.report);
  bool complete = r->ok() && fs::exists(s.output);
  for (const auto& a : recipe.artefacts) complete = complete && fs::exists(s.dir / a.first);
  // Only successes are cached: a failure costs little to reproduce, and a
  // rejected file must leave nothing behind.
  if (!complete || !k.failure.empty()) return k;

  k.ok = true;
  if (recipe.read_outputs) recipe.read_outputs(s, k.report);
  if (auto elf = inspect_elf(s.output)) k.report.code_bytes = elf->code_bytes;
  std::vector<std::pair<fs::path, fs::path>> installs = {{s.output, entry(k.hash, ".so")}};
  for (const auto& a : recipe.artefacts) installs.emplace_back(s.dir / a.first, entry(k.hash, a.second));
  for (const auto& [from, to] : installs) {
    // Atomic: another evaluator sharing the cache may be loading `to` right now.
    if (auto w = install_file_atomic(from, to); !w)
      return make_error(errc::io_error, "cannot store " + to.string() + ": " + w.error().message);
  }
  k.library = entry(k.hash, ".so");
  if (auto w = save_record(entry(k.hash, ".json"), k.report); !w) return tl::unexpected(w.error());
  return k;
}

}  // namespace kevolve::eval
