// The builtin synthesizer over the shipped templates: every catalog operator
// is served, code is deterministic and carries its parameters, memory modes
// do what they promise, and a YAML-only operator is served generically.
#include <gtest/gtest.h>

#include "spec/operator_loader.h"
#include "synth/builtin_synthesizer.h"

namespace kevolve::synth {
namespace {

namespace fs = std::filesystem;
const fs::path kRoot = KEVOLVE_TEST_SOURCE_DIR;

class BuiltinSynth : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto s = builtin_synthesizer::create(kRoot / "knowledge/templates");
    ASSERT_TRUE(s.has_value()) << s.error().message;
    synth_ = s->release();
  }
  static void TearDownTestSuite() { delete synth_; }
  static spec::operator_spec op(const fs::path& yaml) {
    auto o = spec::load_operator(yaml);
    EXPECT_TRUE(o.has_value()) << (o ? "" : o.error().message);
    return o ? *o : spec::operator_spec{};
  }
  static spec::operator_spec catalog(const std::string& name) {
    return op(kRoot / "config/operators" / (name + ".yaml"));
  }
  static synthesis_result write(const spec::operator_spec& o, search::memory_mode mode,
                                std::vector<context_item> ctx, uint64_t seed) {
    synthesis_request req;
    req.op = &o;
    req.variant = &o.variants.front();
    req.mode = mode;
    req.context = std::move(ctx);
    req.seed = seed;
    return synth_->write(req);
  }
  static builtin_synthesizer* synth_;
};
builtin_synthesizer* BuiltinSynth::synth_ = nullptr;

TEST_F(BuiltinSynth, ServesEveryCatalogOperatorAndVariant) {
  auto ops = spec::load_catalog(kRoot / "config/operators");
  ASSERT_TRUE(ops.has_value());
  for (const auto& o : *ops) {
    EXPECT_TRUE(synth_->supports(o, "cpu")) << o.name;
    EXPECT_TRUE(synth_->supports(o, "cuda")) << o.name;
    EXPECT_TRUE(synth_->supports(o, "hip")) << o.name;
    for (const auto& v : o.variants) {
      // A variant only the emulator's DPE takes (gemm_bias_relu bf16) has no
      // cpu or cuda template; the default (first) variant always has both.
      if (&v != &o.variants.front() && synth_->serving(o, &v, "cpu").empty()) {
        EXPECT_FALSE(synth_->serving(o, &v, "mtia_emu").empty()) << o.name << " " << v.name << ": served nowhere";
        continue;
      }
      EXPECT_FALSE(synth_->serving(o, &v, "cpu").empty()) << o.name << " " << v.name;
      synthesis_request req;
      req.op = &o;
      req.variant = &v;
      const synthesis_result r = synth_->write(req);
      ASSERT_TRUE(r.ok) << o.name << ": " << r.error;
      EXPECT_EQ(r.code.find("{{"), std::string::npos) << o.name;
      EXPECT_NE(r.code.find("extern \"C\" int kevolve_kernel"), std::string::npos) << o.name;
      EXPECT_EQ(r.origin.rfind("builtin:cpu/", 0), 0u) << r.origin;
      // The same request on the cuda backend: a cuda template, the cuda ABI.
      req.backend = "cuda";
      const synthesis_result g = synth_->write(req);
      ASSERT_TRUE(g.ok) << o.name << " " << v.name << " on cuda: " << g.error;
      EXPECT_EQ(g.origin.rfind("builtin:cuda/", 0), 0u) << g.origin;
      EXPECT_NE(g.code.find("extern \"C\" int kevolve_kernel(const kv_args* a, cudaStream_t stream)"), std::string::npos)
          << o.name;
      EXPECT_EQ(g.code.find("{{"), std::string::npos) << o.name;
    }
  }
}

TEST_F(BuiltinSynth, SameRequestSameCodeAndParametersShowInTheHeader) {
  const auto o = catalog("softmax");
  for (uint64_t seed : {1u, 2u, 3u, 5u}) {
    const auto a = write(o, search::memory_mode::reset, {}, seed);
    const auto b = write(o, search::memory_mode::reset, {}, seed);
    ASSERT_TRUE(a.ok) << a.error;
    EXPECT_EQ(a.code, b.code);
    auto h = parse_header(a.code);
    ASSERT_TRUE(h.has_value());
    const template_info* t = synth_->library().find(h->name);
    ASSERT_NE(t, nullptr) << h->name;
    EXPECT_TRUE(t->space.contains(h->params)) << h->params.dump();
  }
  // seed 0 on reset: the defaults of the preferred template.
  const auto d = write(o, search::memory_mode::reset, {}, 0);
  auto h = parse_header(d.code);
  ASSERT_TRUE(h.has_value());
  EXPECT_EQ(h->params, synth_->library().find(h->name)->space.defaults());
}

TEST_F(BuiltinSynth, ParametersChangeTheCode) {
  const auto o = catalog("layernorm");
  const template_info* t = synth_->serving(o, &o.variants.front(), "cpu").front();
  param_set p = t->space.defaults();
  const auto a = synth_->render_with(*t, o, p, "");
  ASSERT_TRUE(a.ok) << a.error;
  ASSERT_TRUE(p.contains("vec"));
  p["vec"] = p["vec"] == 8 ? 16 : 8;
  const auto b = synth_->render_with(*t, o, p, "");
  EXPECT_NE(a.code, b.code);
  EXPECT_NE(b.code.find("#define KVP_VEC " + p["vec"].dump()), std::string::npos);
}

TEST_F(BuiltinSynth, InheritMutatesTheParentWithinItsTemplate) {
  const auto o = catalog("rmsnorm");
  const auto parent = write(o, search::memory_mode::reset, {}, 0);
  context_item item;
  item.code = parent.code;
  item.result = eval::status::ok;
  item.bottleneck = "compute-bound";
  item.roofline_fraction = 0.9;
  const auto ph = parse_header(parent.code);
  for (uint64_t seed = 1; seed < 8; ++seed) {
    const auto child = write(o, search::memory_mode::inherit, {item}, seed);
    ASSERT_TRUE(child.ok) << child.error;
    const auto ch = parse_header(child.code);
    ASSERT_TRUE(ch.has_value());
    EXPECT_EQ(ch->name, ph->name);
    const auto n = changed_keys(ph->params, ch->params).size();
    EXPECT_GE(n, 1u) << child.summary;
    EXPECT_LE(n, 2u) << child.summary;
  }
}

TEST_F(BuiltinSynth, CompileFailedParentBacksOff) {
  const auto o = catalog("softmax");
  const template_info* t = synth_->serving(o, &o.variants.front(), "cpu").front();
  param_set good = t->space.defaults();
  param_set bad = good;
  ASSERT_TRUE(t->space.step(bad, "unroll", -1) || t->space.step(bad, "unroll", +1));
  context_item failed{1, synth_->render_with(*t, o, bad, "").code, eval::status::compile_failed, 0.0,
                      "compile error", "error: expected ';'", "", 0.0};
  context_item ok{0, synth_->render_with(*t, o, good, "").code, eval::status::ok, 2.0, "", "", "memory-bound", 0.5};
  const auto child = write(o, search::memory_mode::inherit, {failed, ok}, 11);
  const auto ch = parse_header(child.code);
  ASSERT_TRUE(ch.has_value());
  EXPECT_EQ(ch->params["unroll"], good["unroll"]) << child.summary;
  EXPECT_NE(child.summary.find("back off"), std::string::npos) << child.summary;
}

TEST_F(BuiltinSynth, MergeCrossesTwoParentsOfTheSameTemplate) {
  const auto o = catalog("bias_gelu");
  const template_info* t = synth_->serving(o, &o.variants.front(), "cpu").front();
  rng r(5);
  param_set a = t->space.defaults(), b = t->space.defaults();
  for (const auto& d : t->space.defs())
    if (d.values.size() > 1) b[d.name] = d.values[size_t(d.index_of(a[d.name]) == 0 ? 1 : 0)];
  context_item pa{1, synth_->render_with(*t, o, a, "").code, eval::status::ok, 1.5, "", "", "", 0.3};
  context_item pb{2, synth_->render_with(*t, o, b, "").code, eval::status::ok, 1.8, "", "", "", 0.3};
  const auto child = write(o, search::memory_mode::merge, {pa, pb}, 9);
  const auto ch = parse_header(child.code);
  ASSERT_TRUE(ch.has_value());
  EXPECT_NE(ch->params, a);
  EXPECT_NE(ch->params, b);
  for (auto it = ch->params.begin(); it != ch->params.end(); ++it)
    EXPECT_TRUE(it.value() == a[it.key()] || it.value() == b[it.key()]) << it.key();
}

TEST_F(BuiltinSynth, YamlOnlyElementwiseOperatorIsServedGenerically) {
  const auto o = op(kRoot / "tests/data/operators/ts_silu.yaml");
  ASSERT_TRUE(synth_->supports(o, "cpu"));
  const auto r = write(o, search::memory_mode::reset, {}, 0);
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.origin, "builtin:cpu/elementwise");
  EXPECT_NE(r.code.find("x*sigmoidf(x)"), std::string::npos);
  // An elementwise operator without an expression (feature_hash) is not served by it.
  const auto fh = catalog("feature_hash");
  for (const auto* t : synth_->serving(fh, nullptr, "cpu")) EXPECT_NE(t->name, "cpu/elementwise");
  // A class no template serves is refused with a reason.
  spec::operator_spec scan = o;
  scan.op_class = "scan";
  scan.template_params.clear();
  EXPECT_FALSE(synth_->supports(scan, "cpu"));
  synthesis_request req;
  req.op = &scan;
  const auto none = synth_->write(req);
  EXPECT_FALSE(none.ok);
  EXPECT_NE(none.error.find("no cpu class template serves operator " + scan.name + " (class scan, no template keys)"),
            std::string::npos)
      << none.error;
  // An imported operator names the op of its graph that no class covers.
  scan.graph_ops = {"aten::cumsum", "aten::mul"};
  scan.graph_main = "aten::cumsum";
  EXPECT_NE(synth_->unserved(scan, nullptr, "cpu")
                .find("its graph has aten::cumsum (class scan), which no cpu class template covers; graph: aten::cumsum aten::mul"),
            std::string::npos)
      << synth_->unserved(scan, nullptr, "cpu");
  // A served operator in a dtype its templates do not take says so.
  const auto gemm = catalog("gemm_bias_relu");
  const spec::variant* bf16 = gemm.find_variant("bf16");
  ASSERT_NE(bf16, nullptr);
  EXPECT_EQ(synth_->unserved(gemm, gemm.find_variant("fp32"), "cpu"), "");
  EXPECT_NE(synth_->unserved(gemm, bf16, "cpu").find("in variant bf16 (the templates of its class serve other dtypes)"),
            std::string::npos)
      << synth_->unserved(gemm, bf16, "cpu");
}

// A matmul operator written as YAML names its operands, epilogue and row op
// and is served by cpu/matmul; keys that template cannot take are refused
// with the key and what was expected, in the reason a sweep gives.
TEST_F(BuiltinSynth, AMatmulOperatorsKeysBindTheMatmulTemplate) {
  spec::operator_spec o = catalog("gemm_bias_relu");
  o.template_params = {{"a", "A"}, {"b", "B"}, {"expr", "fmaxf(acc + bias, 0.0f)"}, {"row", "softmax"}};
  ASSERT_TRUE(synth_->supports(o, "cpu")) << synth_->unserved(o, nullptr, "cpu");
  const auto r = write(o, search::memory_mode::reset, {}, 0);
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.origin, "builtin:cpu/matmul");
  EXPECT_NE(r.code.find("const vf bias = KV_COL(2);"), std::string::npos);
  EXPECT_NE(r.code.find("fmaxf(acc + bias, 0.0f)"), std::string::npos);
  EXPECT_NE(r.code.find("constexpr Row ROW = kRowSoftmax;"), std::string::npos);
  const std::vector<std::pair<std::map<std::string, std::string>, std::string>> bad = {
      {{{"a", "A"}, {"b", "B"}, {"trans_b", "2"}}, "'template.trans_b' must be 0 or 1, got '2'"},
      {{{"a", "A"}, {"b", "C"}}, "'template.b': 'C' is no input"},
      {{{"a", "A"}, {"b", "B"}, {"row", "cumsum"}}, "'template.row' must be one of none, sum, mean"},
      {{{"a", "A"}, {"b", "B"}, {"expr", "acc * A"}}, "'template.expr' names the operand 'A'"},
      {{{"a", "A"}, {"b", "B"}, {"row", "group_norm"}, {"groups", "0"}}, "'template.groups' must be a positive integer"},
  };
  for (const auto& [keys, why] : bad) {
    o.template_params = keys;
    EXPECT_FALSE(synth_->supports(o, "cpu")) << why;
    const std::string got = synth_->unserved(o, nullptr, "cpu");
    EXPECT_NE(got.find("cpu/matmul cannot take it: "), std::string::npos) << got;
    EXPECT_NE(got.find(o.file.string() + ": matmul template: " + why), std::string::npos) << got;
  }
}

// A convolution's geometry keys bind cpu/conv: lists padded to three axes;
// a list of the wrong length or a value below its least is refused.
TEST_F(BuiltinSynth, AConvOperatorsGeometryKeysBindTheConvTemplate) {
  spec::operator_spec o = catalog("gemm_bias_relu");
  o.op_class = "conv";
  o.inputs[0].shape = {"N", "C", "H", "W"};
  o.inputs[1].shape = {"O", "C", "3", "3"};
  o.template_params = {{"x", "A"}, {"w", "B"}, {"stride", "2,1"}, {"expr", "acc + bias"}};
  ASSERT_TRUE(synth_->supports(o, "cpu")) << synth_->unserved(o, nullptr, "cpu");
  const auto r = write(o, search::memory_mode::reset, {}, 0);
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.origin, "builtin:cpu/conv");
  EXPECT_NE(r.code.find("STRIDE[3] = { 1, 2, 1 }"), std::string::npos);
  EXPECT_NE(r.code.find("PAD[3] = { 0, 0, 0 }"), std::string::npos);
  EXPECT_NE(r.code.find("const float bias = KV_CH(2);"), std::string::npos);
  const std::vector<std::pair<std::map<std::string, std::string>, std::string>> bad = {
      {{{"x", "A"}, {"w", "B"}, {"stride", "2"}}, "'template.stride' must be 2 integers (one per spatial axis); got '2'"},
      {{{"x", "A"}, {"w", "B"}, {"dilation", "1,0"}}, "'template.dilation' must be 2 integers >= 1"},
      {{{"x", "A"}, {"w", "B"}, {"row", "softmax"}}, "'template.row' must be one of none, mean, group_norm; got 'softmax'"},
      {{{"x", "A"}, {"w", "B"}, {"transposed", "yes"}}, "'template.transposed' must be 0 or 1"},
  };
  for (const auto& [keys, why] : bad) {
    o.template_params = keys;
    EXPECT_FALSE(synth_->supports(o, "cpu")) << why;
    const std::string got = synth_->unserved(o, nullptr, "cpu");
    EXPECT_NE(got.find(o.file.string() + ": conv template: " + why), std::string::npos) << got;
  }
}

// An input broadcast other than along rows (a column) binds cpu/elementwise,
// which broadcasts over any rank; the cuda template refuses it, naming it.
TEST_F(BuiltinSynth, AColumnBroadcastIsServedOnCpuAndRefusedOnCudaByName) {
  spec::operator_spec o = catalog("bias_gelu");
  o.inputs[1].shape = {"B", "1"};
  ASSERT_TRUE(synth_->supports(o, "cpu")) << synth_->unserved(o, nullptr, "cpu");
  EXPECT_EQ(write(o, search::memory_mode::reset, {}, 0).origin, "builtin:cpu/elementwise");
  EXPECT_FALSE(synth_->supports(o, "cuda"));
  const std::string got = synth_->unserved(o, nullptr, "cuda");
  EXPECT_NE(got.find("input 'bias' [B, 1] broadcasts to the output [B, N] other than along rows"), std::string::npos)
      << got;
  o.inputs[1].shape = {"N"};  // a bias row: both serve it
  EXPECT_TRUE(synth_->supports(o, "cuda")) << synth_->unserved(o, nullptr, "cuda");
}

// A scan operator's keys bind cpu/scan (reversed, exclusive, prologue over
// the inputs by name and first letter); bad keys are refused, naming them.
TEST_F(BuiltinSynth, AScanOperatorsKeysBindTheScanTemplate) {
  spec::operator_spec o = catalog("bias_gelu");
  o.op_class = "scan";
  o.template_params = {{"op", "sum"}, {"axis", "1"}, {"reverse", "1"}, {"exclusive", "1"}, {"expr", "x * b"}};
  ASSERT_TRUE(synth_->supports(o, "cpu")) << synth_->unserved(o, nullptr, "cpu");
  const auto r = write(o, search::memory_mode::reset, {}, 0);
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.origin, "builtin:cpu/scan");
  EXPECT_NE(r.code.find("REVERSE = true, EXCLUSIVE = true"), std::string::npos);
  EXPECT_NE(r.code.find("const vf& b = bias;"), std::string::npos);
  const std::vector<std::pair<std::map<std::string, std::string>, std::string>> bad = {
      {{{"op", "max"}, {"axis", "1"}}, "'template.op' must be sum or prod, got 'max'"},
      {{{"op", "sum"}, {"axis", "2"}}, "'template.axis' 2 is past the output's rank 2"},
      {{{"op", "sum"}, {"axis", "-1"}}, "'template.axis' must be an axis 0 to 9 of the output, got '-1'"},
      {{{"op", "sum"}, {"axis", "0"}, {"reverse", "yes"}}, "'template.reverse' must be 0 or 1, got 'yes'"},
  };
  for (const auto& [keys, why] : bad) {
    o.template_params = keys;
    EXPECT_FALSE(synth_->supports(o, "cpu")) << why;
    const std::string got = synth_->unserved(o, nullptr, "cpu");
    EXPECT_NE(got.find(o.file.string() + ": scan template: " + why), std::string::npos) << got;
  }
}

// A segment reduction's keys bind cpu/segment_reduce; an offsets input that
// is not 1-D int64 or a bad initial is refused, naming it.
TEST_F(BuiltinSynth, ASegmentReductionsKeysBindTheSegmentTemplate) {
  spec::operator_spec o = catalog("embedding_bag_sum");
  o.op_class = "jagged";
  o.template_params = {{"reduce", "max"}, {"values", "table"}, {"offsets", "offsets"}, {"initial", "-2.5"}};
  ASSERT_TRUE(synth_->supports(o, "cpu")) << synth_->unserved(o, nullptr, "cpu");
  const auto r = write(o, search::memory_mode::reset, {}, 0);
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.origin, "builtin:cpu/segment_reduce");
  EXPECT_NE(r.code.find("a->inputs[2]"), std::string::npos);
  EXPECT_NE(r.code.find("INITIAL = -2.50000000f"), std::string::npos);
  const std::vector<std::pair<std::map<std::string, std::string>, std::string>> bad = {
      {{{"reduce", "argmax"}}, "'template.reduce' must be sum, mean, max, min or prod, got 'argmax'"},
      {{{"reduce", "sum"}, {"values", "table"}, {"offsets", "table"}}, "'template.values' and 'template.offsets' name one input"},
      {{{"reduce", "sum"}, {"values", "table"}, {"offsets", "indices"}, {"initial", "x"}},
       "'template.initial' must be a finite number, got 'x'"},
      {{{"reduce", "sum"}, {"offsets", "lengths"}}, "'template.offsets': 'lengths' is no input"},
  };
  for (const auto& [keys, why] : bad) {
    o.template_params = keys;
    EXPECT_FALSE(synth_->supports(o, "cpu")) << why;
    const std::string got = synth_->unserved(o, nullptr, "cpu");
    EXPECT_NE(got.find(o.file.string() + ": segment_reduce template: " + why), std::string::npos) << got;
  }
}

// A profiled cuda parent is steered by its hardware counters: memory-bound
// with DRAM at 50% of its peak and a quarter of the warps resident gets more
// threads and blocks in flight (ncu_memory_bound_low_occupancy); the same
// parent without counters gets the generic memory-bound rule instead.
TEST_F(BuiltinSynth, ACudaParentsMetricsPickTheMetricRule) {
  const auto o = catalog("bias_gelu");
  synthesis_request req;
  req.op = &o;
  req.variant = &o.variants.front();
  req.backend = "cuda";
  req.mode = search::memory_mode::reset;
  req.seed = 0;  // the preferred template's defaults
  const auto parent = synth_->write(req);
  ASSERT_TRUE(parent.ok) << parent.error;
  ASSERT_EQ(parent.origin, "builtin:cuda/elementwise");
  const auto ph = parse_header(parent.code);
  ASSERT_TRUE(ph.has_value());
  ASSERT_EQ(ph->params["threads"], 256);

  context_item item;
  item.code = parent.code;
  item.result = eval::status::ok;
  item.bottleneck = "memory-bound";
  item.roofline_fraction = 0.4;
  item.metrics = {{"dram_pct", 50.0}, {"occupancy_pct", 25.0}, {"registers", 32}};
  req.mode = search::memory_mode::inherit;
  req.context = {item};
  for (uint64_t seed = 1; seed < 5; ++seed) {
    req.seed = seed;
    const auto child = synth_->write(req);
    ASSERT_TRUE(child.ok) << child.error;
    EXPECT_NE(child.summary.find("rule ncu_memory_bound_low_occupancy"), std::string::npos) << child.summary;
    const auto ch = parse_header(child.code);
    ASSERT_TRUE(ch.has_value());
    EXPECT_EQ(ch->params["threads"], 512) << child.summary;
    EXPECT_EQ(ch->params["unroll"], ph->params["unroll"]) << child.summary;
  }

  req.context[0].metrics.clear();  // not profiled: the rules decide as without Nsight Compute
  const auto plain = synth_->write(req);
  ASSERT_TRUE(plain.ok) << plain.error;
  EXPECT_NE(plain.summary.find("rule memory_bound_low_bandwidth"), std::string::npos) << plain.summary;
  EXPECT_EQ(parse_header(plain.code)->params["threads"], 256) << plain.summary;

  // Warps waiting on loads with occupancy fine: more bytes in flight per thread.
  req.context[0].metrics = {{"dram_pct", 55.0}, {"occupancy_pct", 85.0}, {"stall_long_scoreboard", 9.0}};
  const auto deeper = synth_->write(req);
  ASSERT_TRUE(deeper.ok) << deeper.error;
  EXPECT_NE(deeper.summary.find("rule ncu_long_scoreboard_more_in_flight"), std::string::npos) << deeper.summary;
  EXPECT_GT(parse_header(deeper.code)->params["unroll"].get<int>(), ph->params["unroll"].get<int>()) << deeper.summary;
}

}  // namespace
}  // namespace kevolve::synth
