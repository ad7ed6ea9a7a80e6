// The checked-in renders of the mtia_emu templates: every
// config/operators/*/mtia_baseline.cpp and knowledge/examples/mtia_emu/*.cpp
// names its template (knowledge/templates/mtia_emu/<source>) and states its
// parameter point as its first run of `#define KVP_...` lines, one per
// parameter of the template. The template rendered at that point, timed by
// the real evaluator against the file as the operator's mtia_baseline on the
// operator's timed shapes, in every variant the template serves, has fitness
// exactly 1: the emulator's timer is deterministic. A baseline's point is
// the template's defaults (the search starts from the baseline's kernel).
#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "common/paths.h"
#include "eval/backends/mtia_emu_backend.h"
#include "support/test_env.h"
#include "synth/builtin_synthesizer.h"

namespace kevolve::testing {
namespace {
namespace fs = std::filesystem;

struct checked_render {
  std::string op;     // the operator it is a kernel of
  fs::path relative;  // from the project root
  bool baseline = false;
};
void PrintTo(const checked_render& r, std::ostream* os) { *os << r.relative.string(); }

std::string upper(std::string s) {
  for (char& c : s) c = std::isalnum(static_cast<unsigned char>(c)) ? char(std::toupper(c)) : '_';
  return s;
}

// What a file says it is a render of: the template source named in its
// leading comment and the `#define KVP_<NAME> <value>` lines right after it.
struct claim {
  std::string source;                          // "row_norm.cpp.tmpl"
  std::map<std::string, std::string> defines;  // "SLOTS" -> "1"
};

claim read_claim(const std::string& text) {
  claim c;
  std::istringstream in(text);
  std::string line, comment;
  while (std::getline(in, line) && line.rfind("//", 0) == 0) comment += line + " ";
  const std::string dir = "knowledge/templates/mtia_emu/";
  if (const size_t at = comment.find(dir); at != std::string::npos) {
    const size_t begin = at + dir.size();
    c.source = comment.substr(begin, comment.find_first_of(" :,;)", begin) - begin);
  }
  while (line.rfind("#define KVP_", 0) == 0) {
    std::istringstream words(line);
    std::string define, name, value;
    words >> define >> name >> value;
    c.defines[name.substr(4)] = value;
    if (!std::getline(in, line)) break;
  }
  return c;
}

// The claimed defines as a parameter set of `t`: every parameter stated
// once with one of its values (integers as KVP_<NAME> <v>, strings as
// KVP_<NAME>_<V> 1, as synth::render writes them), nothing else; else why not.
std::string to_params(const synth::template_info& t, claim c, synth::param_set& out) {
  out = synth::param_set::object();
  std::string problems;
  for (const auto& def : t.space.defs()) {
    const std::string name = upper(def.name);
    std::vector<nlohmann::json> stated;
    if (def.default_value.is_string()) {
      for (const auto& v : def.values)
        if (auto it = c.defines.find(name + "_" + upper(v.get<std::string>())); it != c.defines.end()) {
          if (it->second == "1") stated.push_back(v);
          c.defines.erase(it);
        }
    } else if (auto it = c.defines.find(name); it != c.defines.end()) {
      const nlohmann::json v = nlohmann::json::parse(it->second, nullptr, false);
      if (!v.is_discarded() && def.index_of(v) >= 0) stated.push_back(v);
      else problems += "; KVP_" + name + " " + it->second + " is none of the values of '" + def.name + "'";
      c.defines.erase(it);
    }
    if (stated.size() == 1) out[def.name] = stated.front();
    else if (stated.empty()) problems += "; parameter '" + def.name + "' is not stated";
    else problems += "; parameter '" + def.name + "' is stated more than once";
  }
  for (const auto& [name, value] : c.defines)
    problems += "; KVP_" + name + " is no parameter of " + t.name;
  return problems.empty() ? problems : problems.substr(2);
}

std::vector<checked_render> checked_renders() {
  const fs::path root = KEVOLVE_TEST_SOURCE_DIR;
  std::vector<checked_render> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(root / "config" / "operators", ec))
    if (fs::exists(e.path() / "mtia_baseline.cpp"))
      out.push_back({e.path().filename().string(), fs::path("config/operators") / e.path().filename() / "mtia_baseline.cpp",
                     true});
  for (const auto& e : fs::directory_iterator(root / "knowledge" / "examples" / "mtia_emu", ec))
    if (e.path().extension() == ".cpp")
      out.push_back({e.path().stem().string(), fs::path("knowledge/examples/mtia_emu") / e.path().filename(), false});
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.relative < b.relative; });
  return out;
}

// Real shapes, one input set per shape: the emulated time depends only on
// the commands a kernel issues (a data-dependent kernel's on set 0's data).
eval::evaluator_options render_options() {
  eval::evaluator_options o;
  o.threads = 2;
  o.verify_trials = 1;
  o.call_timeout = std::chrono::milliseconds(120000);
  o.ncu = false;
  return o;
}

class SynthMtiaRenders : public ::testing::TestWithParam<checked_render> {};

TEST_P(SynthMtiaRenders, TimeExactlyAsTheirTemplateAtTheParametersTheyState) {
  const checked_render& f = GetParam();
  const std::string file = f.relative.string();
  auto text = read_file(data_root() / f.relative);
  ASSERT_TRUE(text.has_value()) << text.error().message;
  const claim c = read_claim(*text);
  ASSERT_FALSE(c.source.empty()) << file << ": names no knowledge/templates/mtia_emu/ source in its leading comment";
  ASSERT_FALSE(c.defines.empty()) << file << ": states no parameters (#define KVP_... after its leading comment)";

  auto op = spec::load_operator(data_root() / "config" / "operators" / (f.op + ".yaml"));
  ASSERT_TRUE(op.has_value()) << op.error().message;
  if (f.baseline) {
    ASSERT_TRUE(fs::equivalent(op->baselines.at("mtia_emu").source, data_root() / f.relative)) << file;
  }
  op->baselines.at("mtia_emu").source = data_root() / f.relative;
  auto s = synth::builtin_synthesizer::create();
  ASSERT_TRUE(s.has_value()) << s.error().message;
  auto hw = eval::mtia_hardware_profile();
  ASSERT_TRUE(hw.has_value()) << hw.error().message;

  int variants = 0;
  for (const auto& var : op->variants) {
    const synth::template_info* t = nullptr;
    for (const auto* served : (*s)->serving(*op, &var, "mtia_emu"))
      if (served->source_file.filename() == c.source) t = served;
    if (!t) continue;  // e.g. gemm_bias_relu fp32: the template multiplies bf16/fp16 only
    ++variants;
    synth::param_set params;
    const std::string problems = to_params(*t, c, params);
    ASSERT_EQ(problems, "") << file << " (" << t->name << ")";
    if (f.baseline) {
      EXPECT_EQ(params.dump(), t->space.defaults().dump()) << file << ": a baseline states the defaults of " << t->name;
    }
    const auto k = (*s)->render_with(*t, *op, params, "as stated");
    ASSERT_TRUE(k.ok) << k.error;

    auto ev = eval::evaluator::create(*op, var.name, render_options(), *hw);
    ASSERT_TRUE(ev.has_value()) << ev.error().message;
    auto v = (*ev)->evaluate(k.code);
    ASSERT_TRUE(v.has_value()) << v.error().message;
    ASSERT_EQ(eval::to_string(v->result), std::string("ok")) << file << " " << var.name << " " << params.dump()
                                                             << ": " << v->reason;
    for (const auto& sv : v->shapes) {
      if (sv.holdout) continue;
      EXPECT_EQ(sv.candidate.median_s, sv.baseline.median_s)
          << file << " " << var.name << " " << sv.shape << ": the file takes " << std::llround(sv.baseline.median_s * 1e9)
          << " emulated ns, " << t->name << " rendered at " << params.dump() << " "
          << std::llround(sv.candidate.median_s * 1e9);
    }
    EXPECT_EQ(v->fitness, 1.0) << file << " " << var.name;
  }
  EXPECT_GT(variants, 0) << file << ": no variant of " << f.op << " is served by a template with source " << c.source;
}

std::string render_name(const ::testing::TestParamInfo<checked_render>& p) {
  return (p.param.baseline ? "baseline_" : "example_") + p.param.op;
}

INSTANTIATE_TEST_SUITE_P(CheckedIn, SynthMtiaRenders, ::testing::ValuesIn(checked_renders()), render_name);

}  // namespace
}  // namespace kevolve::testing
