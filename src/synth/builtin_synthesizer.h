// The offline synthesizer: kernel templates with declared parameter spaces
// (knowledge/templates/), steered by diagnostic rules kept as data
// (knowledge/templates/rules.json). It serves any operator whose YAML names a
// class a template supports (elementwise with `expr`, row_reduction with
// `reduction`, gather_reduce with `reduce`, ...), with no code change.
// Deterministic: the same request, seed included, gives the same code.
#pragma once

#include <filesystem>
#include <memory>
#include <string>

#include "common/error.h"
#include "synth/mutation.h"
#include "synth/rules.h"
#include "synth/synthesizer.h"
#include "synth/template_library.h"
#include "synth/template_render.h"

namespace kevolve::synth {

class builtin_synthesizer : public synthesizer {
 public:
  // Loads templates and rules below `root` (default: knowledge/templates).
  static expected<std::unique_ptr<builtin_synthesizer>> create(std::filesystem::path root = {});

  std::string name() const override { return "builtin"; }
  bool supports(const spec::operator_spec& op, const std::string& backend) const override;
  synthesis_result write(const synthesis_request& request) override;

  // Templates that serve the operator (and variant, when given), best first.
  std::vector<const template_info*> serving(const spec::operator_spec& op, const spec::variant* v,
                                            const std::string& backend) const;
  // The code of one template at one parameter set (normalized into its space).
  synthesis_result render_with(const template_info& t, const spec::operator_spec& op, const param_set& params,
                               const std::string& summary) const;

  const template_library& library() const { return library_; }
  const rule_set& rules() const { return rules_; }

 private:
  builtin_synthesizer(template_library lib, rule_set rules) : library_(std::move(lib)), rules_(std::move(rules)) {}
  synthesis_result fresh(const synthesis_request& req, const std::vector<const template_info*>& ts, rng& r) const;

  template_library library_;
  rule_set rules_;
};

}  // namespace kevolve::synth
