// Skills as priors for the builtin synthesizer: the template and parameters
// that paid off in earlier searches, read from the `kevolve-skill` blocks of
// promoted skill documents (knowledge/skills/*.md, written by
// `kevolve kb promote`). A prior applies to an operator of the same class on
// the same backend: as-is when its template serves the operator, else its
// parameter values carried over to the serving template by name (values the
// template does not allow fall back to its defaults). No operator knowledge
// lives here: only what the documents say.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "common/error.h"
#include "spec/operator_spec.h"
#include "synth/param_space.h"

namespace kevolve::synth {

struct template_info;

struct skill_prior {
  std::string file;  // the document, e.g. "softmax-fp32-cpu.md"
  std::string op, op_class, variant, backend, template_name;
  param_set params;
  double fitness = 0;
};

// A prior made concrete for one operator: a serving template and a
// parameter set in its space.
struct skill_start {
  const skill_prior* prior = nullptr;
  const template_info* t = nullptr;
  param_set params;
  bool same_template = false;  // the skill's own template (not carried over)
};

class skill_priors {
 public:
  // Every *.md in `dir` with a `kevolve-skill` block (a missing directory:
  // no priors). A malformed block is an error naming the file and key.
  static expected<skill_priors> load(const std::filesystem::path& dir);
  // One document's text; no block: nothing added.
  expected<void> add(const std::string& text, const std::string& file);

  const std::vector<skill_prior>& priors() const { return priors_; }
  bool empty() const { return priors_.empty(); }

  // The starts for this operator among its serving templates (best first),
  // distinct, ranked: the skill's own template first, then the same operator
  // name, then higher fitness, then file name.
  std::vector<skill_start> starts(const spec::operator_spec& op, const std::string& backend,
                                  const std::vector<const template_info*>& serving) const;

 private:
  std::vector<skill_prior> priors_;
};

}  // namespace kevolve::synth
