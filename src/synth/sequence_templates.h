// The builtin synthesizer's templates for `sequence` operators: one
// composite per chain of part templates ("sequence:cpu/conv+cpu/pooling"),
// whose parameter space is its parts' spaces side by side (part i's `unroll`
// as `p<i>_unroll`), so the search steers every part at once. Rendering one
// renders each part's template on the part as an operator of its own
// (spec::part_operator) and composes the kernels (synth/sequence_compose.h).
// Diagnostic rules name a template's own parameters and do not move a
// composite's.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "common/error.h"
#include "spec/operator_spec.h"
#include "synth/template_library.h"

namespace kevolve::synth {

class sequence_templates {
 public:
  // The templates serving an operator (best first), for each part.
  using part_serving = std::function<std::vector<const template_info*>(const spec::operator_spec&)>;

  // The composite of the parts' best templates on `backend`, or null where a
  // part has none.
  const template_info* serving(const spec::operator_spec& op, const std::string& backend,
                               const part_serving& serve);
  // A composite by name (a candidate's header), or null.
  const template_info* find(const std::string& name) const;
  bool is_composite(const template_info* t) const;

  // The code of composite `t` at `params` (normalized into its space) for `op`.
  expected<std::string> render(const template_info& t, const spec::operator_spec& op, const param_set& params) const;

  // Part i's parameter name in the composite.
  static std::string part_param(size_t i, const std::string& name) { return "p" + std::to_string(i) + "_" + name; }

 private:
  struct composite {
    template_info info;
    std::vector<const template_info*> parts;
  };
  mutable std::mutex mutex_;
  std::map<std::string, std::unique_ptr<composite>> by_name_;
};

}  // namespace kevolve::synth
