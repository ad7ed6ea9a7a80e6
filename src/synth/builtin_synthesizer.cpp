#include "synth/builtin_synthesizer.h"

#include <algorithm>

#include "synth/bindings.h"
#include "synth/sequence_compose.h"

namespace kevolve::synth {

namespace {

// A context item whose code came from a template of this library.
struct known_item {
  const context_item* item = nullptr;
  const template_info* t = nullptr;
  param_set params;
};

template <class Find>
std::vector<known_item> recognize(const std::vector<context_item>& context, const Find& find,
                                  const std::vector<const template_info*>& serving) {
  std::vector<known_item> out;
  for (const auto& c : context) {
    known_item k;
    k.item = &c;
    if (auto h = parse_header(c.code)) {
      const template_info* t = find(h->name);
      if (t && std::find(serving.begin(), serving.end(), t) != serving.end()) {
        k.t = t;
        k.params = t->space.normalize(h->params);
      }
    }
    out.push_back(std::move(k));
  }
  return out;
}

}  // namespace

expected<std::unique_ptr<builtin_synthesizer>> builtin_synthesizer::create(std::filesystem::path root,
                                                                           std::filesystem::path skills) {
  if (root.empty()) {
    root = template_library::default_root();
    if (skills.empty()) skills = root.parent_path() / "skills";
  }
  auto lib = template_library::load(root);
  if (!lib) return tl::unexpected(lib.error());
  auto rules = rule_set::load(root / "rules.json");
  if (!rules) return tl::unexpected(rules.error());
  skill_priors priors;
  if (!skills.empty()) {
    auto loaded = skill_priors::load(skills);
    if (!loaded) return tl::unexpected(loaded.error());
    priors = std::move(*loaded);
  }
  return std::unique_ptr<builtin_synthesizer>(
      new builtin_synthesizer(std::move(*lib), std::move(*rules), std::move(priors)));
}

const template_info* builtin_synthesizer::find(const std::string& name) const {
  if (const template_info* t = library_.find(name)) return t;
  return sequences_.find(name);
}

std::vector<const template_info*> builtin_synthesizer::serving(const spec::operator_spec& op, const spec::variant* v,
                                                               const std::string& backend) const {
  std::vector<const template_info*> out;
  if (op.op_class == "sequence") {
    auto serve = [&](const spec::operator_spec& part) { return serving(part, v, backend); };
    if (const template_info* t = sequences_.serving(op, backend, serve)) out.push_back(t);
    return out;
  }
  for (const template_info* t : library_.serving(op, v, backend))
    if (can_bind(t->binding, op)) out.push_back(t);
  return out;
}

std::string builtin_synthesizer::unserved(const spec::operator_spec& op, const spec::variant* v,
                                          const std::string& backend) const {
  if (!serving(op, v, backend).empty()) return "";
  if (op.op_class == "sequence") {
    if (!sequence_backend(backend))
      return "no " + backend + " template serves operator " + op.name +
             ": a sequence of class kernels runs on backends of tensors in memory, not emulated ones";
    for (size_t i = 0; i < op.parts.size(); ++i) {
      const std::string why = unserved(spec::part_operator(op, i), v, backend);
      if (!why.empty())
        return "operator " + op.name + " is a sequence of " + std::to_string(op.parts.size()) + " class kernels; part " +
               std::to_string(i) + " (class " + op.parts[i].op_class + ") is not served: " + why;
    }
  }
  if (v && !serving(op, nullptr, backend).empty())
    return "no " + backend + " template serves operator " + op.name + " in variant " + v->name +
           " (the templates of its class serve other dtypes)";
  // A template of its class whose binding refuses the operator's keys says why.
  for (const template_info* t : library_.serving(op, v, backend)) {
    auto bound = bind(t->binding, op);
    if (!bound)
      return "no " + backend + " template serves operator " + op.name + ": " + t->name + " cannot take it: " +
             bound.error().message;
  }
  std::string keys;
  for (const auto& [k, val] : op.template_params) keys += (keys.empty() ? "" : ", ") + k + ": " + val;
  std::string why = "no " + backend + " class template serves operator " + op.name;
  if (!op.graph_main.empty()) {
    why += ": its graph has " + op.graph_main + " (class " + op.op_class + "), which no " + backend +
           " class template covers; graph:";
    for (const auto& o : op.graph_ops) why += " " + o;
  } else {
    why += " (class " + op.op_class + (keys.empty() ? ", no template keys" : ", template keys " + keys) + ")";
  }
  return why + "; give it an llm endpoint, a kernel of its own (--seed-from), or a class and template keys a template "
               "serves (knowledge/templates/README.md)";
}

bool builtin_synthesizer::supports(const spec::operator_spec& op, const std::string& backend) const {
  return !serving(op, nullptr, backend).empty();
}

synthesis_result builtin_synthesizer::render_with(const template_info& t, const spec::operator_spec& op,
                                                  const param_set& params, const std::string& summary) const {
  synthesis_result res;
  const param_set p = t.space.normalize(params);
  auto code = sequences_.is_composite(&t) ? sequences_.render(t, op, p) : render(t, op, p);
  if (!code) {
    res.error = code.error().message;
    return res;
  }
  res.ok = true;
  res.code = std::move(*code);
  res.origin = "builtin:" + t.name;
  res.summary = t.name + " " + summary;
  return res;
}

synthesis_result builtin_synthesizer::fresh(const synthesis_request& req, const std::vector<const template_info*>& ts,
                                            rng& r) const {
  // Skills first: the root's first children take the matching skills'
  // starts in rank order; later fresh samples start, with probability
  // kSkillBias, from one of them and change one or two parameters.
  const auto starts = skills_.starts(*req.op, req.backend, ts);
  if (!starts.empty()) {
    if (req.parent == search::kRoot && req.sibling_index >= 0 && size_t(req.sibling_index) < starts.size()) {
      const skill_start& s = starts[size_t(req.sibling_index)];
      return render_with(*s.t, *req.op, s.params,
                         "skill " + s.prior->file + (s.same_template ? "" : " (carried over from " +
                                                                                s.prior->template_name + ")"));
    }
    if (r.uniform() < kSkillBias) {
      const skill_start& s = starts[r.below(starts.size())];
      param_set p = s.params;
      const std::string changed = s.t->space.mutate_one(p, r);
      if (r.below(2)) s.t->space.mutate_one(p, r, {changed});
      return render_with(*s.t, *req.op, p, "around skill " + s.prior->file + ": " + describe_change(s.params, p));
    }
  }
  // Every fourth fresh sample (seed 0 included) is the best template's
  // defaults; the others sample a serving template and its parameters.
  if (req.seed % 4 == 0) return render_with(*ts.front(), *req.op, ts.front()->space.defaults(), "reset: defaults");
  const template_info* t = ts[r.below(ts.size())];
  return render_with(*t, *req.op, t->space.sample(r), "reset: sampled");
}

synthesis_result builtin_synthesizer::write(const synthesis_request& req) {
  synthesis_result res;
  if (!req.op) {
    res.error = "no operator in the request";
    return res;
  }
  const auto ts = serving(*req.op, req.variant, req.backend);
  if (ts.empty()) {
    res.error = unserved(*req.op, req.variant, req.backend);
    return res;
  }
  rng r(req.seed ^ 0x6b65766f6c7665ull);
  const auto known = recognize(req.context, [this](const std::string& n) { return find(n); }, ts);
  if (req.mode == search::memory_mode::reset || known.empty() || !known.front().t)
    return fresh(req, ts, r);

  const known_item& parent = known.front();
  const template_info& t = *parent.t;
  auto same_ok = [&](const known_item& k) { return k.t == &t && k.item->result == eval::status::ok; };

  if (req.mode == search::memory_mode::merge) {
    const known_item* other = nullptr;
    for (size_t i = 1; i < known.size(); ++i)
      if (same_ok(known[i]) && known[i].params != parent.params &&
          (!other || known[i].item->fitness > other->item->fitness))
        other = &known[i];
    if (other) {
      step_result s = crossover(t.space, parent.params, other->params, r);
      return render_with(t, *req.op, s.params, s.summary);
    }
  }
  if (req.mode == search::memory_mode::compare_siblings && known.size() > 1) {
    const known_item* best = same_ok(parent) ? &parent : nullptr;
    for (size_t i = 1; i < known.size(); ++i)
      if (same_ok(known[i]) && (!best || known[i].item->fitness > best->item->fitness)) best = &known[i];
    if (best) {
      std::vector<param_set> worse;
      for (const auto& k : known)
        if (k.t == &t && &k != best) worse.push_back(k.params);
      step_result s = sibling_step(t.space, best->params, worse, r);
      return render_with(t, *req.op, s.params, s.summary);
    }
  }
  // inherit (and the fallbacks of the other modes): earlier correct
  // candidates of the same template, nearest first, are what a failure
  // backs off to.
  std::vector<param_set> earlier_ok;
  for (size_t i = 1; i < known.size(); ++i)
    if (same_ok(known[i])) earlier_ok.push_back(known[i].params);
  step_result s = inherit_step(t.space, parent.params, *parent.item, earlier_ok, rules_, r);
  return render_with(t, *req.op, s.params, s.summary);
}

}  // namespace kevolve::synth
