// The offline synthesizer: kernel templates with declared parameter spaces
// (knowledge/templates/), steered by diagnostic rules kept as data
// (knowledge/templates/rules.json). It serves any operator whose YAML names a
// class a template supports (elementwise with `expr`, row_reduction with
// `reduction`, gather_reduce with `reduce`, ...), with no code change.
// A `sequence` operator (spec/operator_parts.h) is served by a composite of
// its parts' best templates (synth/sequence_templates.h).
// Skills (knowledge/skills/*.md, `kevolve kb promote`) are priors: the first
// children of the root take the matching skills' templates and parameters,
// and later fresh samples start around them with probability
// kSkillBias (synth/skill_priors.h).
// Deterministic: the same request, seed included, gives the same code.
#pragma once

#include <filesystem>
#include <memory>
#include <string>

#include "common/error.h"
#include "synth/mutation.h"
#include "synth/rules.h"
#include "synth/sequence_templates.h"
#include "synth/skill_priors.h"
#include "synth/synthesizer.h"
#include "synth/template_library.h"
#include "synth/template_render.h"

namespace kevolve::synth {

class builtin_synthesizer : public synthesizer {
 public:
  // Share of fresh samples (after the skills' own starts) drawn around a
  // skill's parameters rather than uniformly.
  static constexpr double kSkillBias = 0.5;

  // Loads templates and rules below `root` (default: knowledge/templates)
  // and skill priors from `skills` (default: knowledge/skills when `root` is
  // the default too; otherwise none).
  static expected<std::unique_ptr<builtin_synthesizer>> create(std::filesystem::path root = {},
                                                               std::filesystem::path skills = {});

  std::string name() const override { return "builtin"; }
  bool supports(const spec::operator_spec& op, const std::string& backend) const override;
  synthesis_result write(const synthesis_request& request) override;

  // Templates that serve the operator (and variant, when given), best first.
  std::vector<const template_info*> serving(const spec::operator_spec& op, const spec::variant* v,
                                            const std::string& backend) const;
  // Empty when a template serves the operator in the variant on the backend;
  // else why not, in one sentence a user can act on (the traced graph's op
  // that no class covers, when the operator was imported from PyTorch).
  std::string unserved(const spec::operator_spec& op, const spec::variant* v, const std::string& backend) const;
  // The code of one template at one parameter set (normalized into its space).
  synthesis_result render_with(const template_info& t, const spec::operator_spec& op, const param_set& params,
                               const std::string& summary) const;

  const template_library& library() const { return library_; }
  const rule_set& rules() const { return rules_; }
  const skill_priors& skills() const { return skills_; }
  // One more skill document's priors (a --seed-from store's; see factory.h).
  expected<void> add_skill(const std::string& text, const std::string& file) { return skills_.add(text, file); }

 private:
  builtin_synthesizer(template_library lib, rule_set rules, skill_priors skills)
      : library_(std::move(lib)), rules_(std::move(rules)), skills_(std::move(skills)) {}
  synthesis_result fresh(const synthesis_request& req, const std::vector<const template_info*>& ts, rng& r) const;
  // A template of the library or a composite, by name.
  const template_info* find(const std::string& name) const;

  template_library library_;
  rule_set rules_;
  skill_priors skills_;
  mutable sequence_templates sequences_;  // made on first use, per chain of part templates
};

}  // namespace kevolve::synth
