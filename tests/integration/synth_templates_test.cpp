// Every starter operator (small shapes, tests/data/operators/ts_*.yaml): the
// builtin synthesizer's default kernel of every serving template, and a few
// rule-guided and random children, compile and pass the real evaluator in
// every dtype variant. Also the YAML-only ts_silu through the generic template.
#include <cstdlib>
#include <iostream>

#include <gtest/gtest.h>

#include "support/test_env.h"
#include "synth/builtin_synthesizer.h"

namespace kevolve::testing {
namespace {

using synth::builtin_synthesizer;

builtin_synthesizer& synthesizer() {
  static std::unique_ptr<builtin_synthesizer> s = [] {
    auto r = builtin_synthesizer::create();
    EXPECT_TRUE(r.has_value()) << (r ? "" : r.error().message);
    return r ? std::move(*r) : nullptr;
  }();
  return *s;
}

// Children per variant beyond the defaults: the first variant gets more.
int children(bool first_variant) {
  const char* e = std::getenv("KEVOLVE_SYNTH_CHILDREN");
  const int n = e ? std::atoi(e) : 5;
  return first_variant ? n : 1;
}

void check(const std::string& what, eval::evaluator& ev, const synth::synthesis_result& r, double* fitness) {
  ASSERT_TRUE(r.ok) << what << ": " << r.error;
  auto v = ev.evaluate(r.code);
  ASSERT_TRUE(v.has_value()) << what << ": " << v.error().message;
  EXPECT_EQ(eval::to_string(v->result), std::string("ok"))
      << what << " [" << r.summary << "]: " << v->reason << "\n" << v->compile.diagnostics.substr(0, 3000)
      << "\n--- code head ---\n" << r.code.substr(0, 400);
  if (fitness) *fitness = v->fitness;
}

class SynthTemplates : public ::testing::TestWithParam<std::string> {};

TEST_P(SynthTemplates, DefaultsAndChildrenPassTheEvaluator) {
  const spec::operator_spec op = test_operator(GetParam());
  builtin_synthesizer& s = synthesizer();
  const spec::hardware_profile hw = machine_profile();
  for (size_t vi = 0; vi < op.variants.size(); ++vi) {
    const spec::variant& var = op.variants[vi];
    const auto ts = s.serving(op, &var, "cpu");
    ASSERT_FALSE(ts.empty()) << op.name << " " << var.name;
    auto ev = eval::evaluator::create(op, var.name, fast_options(), hw);
    ASSERT_TRUE(ev.has_value()) << ev.error().message;
    for (const auto* t : ts) {
      double fit = 0;
      const auto d = s.render_with(*t, op, t->space.defaults(), "defaults");
      check(op.name + "/" + var.name + " " + t->name + " defaults", **ev, d, &fit);
      std::cout << "[synth] " << op.name << " " << var.name << " " << t->name << " defaults fitness " << fit << "\n";
      // Children: a rule-guided one from a memory-bound parent, then random ones.
      synth::context_item parent;
      parent.code = d.code;
      parent.result = eval::status::ok;
      parent.bottleneck = "memory-bound";
      parent.roofline_fraction = 0.3;
      const int n = children(vi == 0) / int(ts.size()) + (vi == 0 ? 1 : 0);
      for (int c = 0; c < n; ++c) {
        synth::synthesis_request req;
        req.op = &op;
        req.variant = &var;
        req.seed = 1000 + uint64_t(c) * 7 + vi;
        if (c % 2 == 0) {
          req.mode = search::memory_mode::inherit;
          req.context = {parent};
          parent.bottleneck = c == 0 ? "memory-bound" : "compute-bound";
        } else {
          req.mode = search::memory_mode::reset;
          if (req.seed % 4 == 0) ++req.seed;
        }
        const auto child = s.write(req);
        check(op.name + "/" + var.name + " child " + std::to_string(c), **ev, child, nullptr);
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Starter, SynthTemplates,
                         ::testing::Values("ts_softmax", "ts_layernorm", "ts_rmsnorm", "ts_bias_gelu", "ts_silu",
                                           "ts_embedding_bag_sum", "ts_gemm_bias_relu", "ts_conv1d", "ts_bucketize",
                                           "ts_feature_hash", "ts_jagged_to_padded_dense", "ts_sequence_truncate",
                                           "ts_dot_interaction", "ts_sequence_tanh_softmax"),
                         [](const auto& param_info) { return param_info.param; });

}  // namespace
}  // namespace kevolve::testing
