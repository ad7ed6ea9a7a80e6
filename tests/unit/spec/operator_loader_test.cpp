// The real catalog must load, and load into the numbers the evaluator and
// the roofline use: softmax is checked field by field.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>

#include "common/fs.h"
#include "spec/operator_loader.h"
#include "spec_test_util.h"

namespace kevolve::spec {
namespace {
namespace fs = std::filesystem;
using testing::catalog_dir;

operator_spec load_softmax() {
  auto op = load_operator(catalog_dir() / "softmax.yaml");
  if (!op) {
    ADD_FAILURE() << op.error().message;
    return {};
  }
  return *op;
}

TEST(load_operator, softmax_top_level_fields) {
  const operator_spec op = load_softmax();
  EXPECT_EQ(op.name, "softmax");
  EXPECT_EQ(op.op_class, "row_reduction");
  EXPECT_NE(op.description.find("softmax"), std::string::npos) << op.description;
  EXPECT_EQ(op.file, catalog_dir() / "softmax.yaml");
  EXPECT_EQ(op.symbols, (std::vector<std::string>{"B", "N"}));
  EXPECT_TRUE(op.derived.empty());
  EXPECT_TRUE(op.params.empty());
  EXPECT_EQ(op.bytes, "2 * B * N * sizeof(T)");
  EXPECT_EQ(op.flops, "5 * B * N");
  EXPECT_EQ(op.workspace_bytes, "0");         // default
  EXPECT_DOUBLE_EQ(op.reference_max_flops, 2e9);  // default
  EXPECT_DOUBLE_EQ(op.max_speedup, 100.0);       // raised for its scalar baseline
  EXPECT_TRUE(op.allowed_libraries.empty());
  EXPECT_EQ(op.template_params, (std::map<std::string, std::string>{{"reduction", "softmax"}}));
}

TEST(load_operator, softmax_variants_keep_file_order_first_is_default) {
  const operator_spec op = load_softmax();
  ASSERT_EQ(op.variants.size(), 2u);
  EXPECT_EQ(op.variants[0].name, "fp32");
  EXPECT_EQ(op.variants[0].types, (std::map<std::string, dtype>{{"T", dtype::f32}}));
  EXPECT_EQ(op.variants[1].name, "bf16");
  EXPECT_EQ(op.variants[1].types, (std::map<std::string, dtype>{{"T", dtype::bf16}}));
  ASSERT_NE(op.find_variant("bf16"), nullptr);
  EXPECT_EQ(op.find_variant("bf16")->name, "bf16");
  EXPECT_EQ(op.find_variant("fp16"), nullptr);
}

TEST(load_operator, softmax_tensors_generators_and_tolerances) {
  const operator_spec op = load_softmax();
  ASSERT_EQ(op.inputs.size(), 1u);
  EXPECT_EQ(op.inputs[0].name, "x");
  EXPECT_EQ(op.inputs[0].dtype, "T");
  EXPECT_EQ(op.inputs[0].shape, (std::vector<std::string>{"B", "N"}));
  ASSERT_EQ(op.outputs.size(), 1u);
  EXPECT_EQ(op.outputs[0].name, "y");
  EXPECT_EQ(op.outputs[0].shape, (std::vector<std::string>{"B", "N"}));

  ASSERT_EQ(op.generators.size(), 1u);
  const auto& gx = op.generators.at("x");
  ASSERT_EQ(gx.size(), 2u);
  EXPECT_EQ(gx[0].dist, "normal");
  EXPECT_EQ(gx[0].args, (std::map<std::string, std::string>{{"mean", "0"}, {"std", "2"}}));
  EXPECT_EQ(gx[1].dist, "uniform");
  EXPECT_EQ(gx[1].args, (std::map<std::string, std::string>{{"low", "-60"}, {"high", "60"}}));

  ASSERT_EQ(op.tolerances.size(), 2u);
  EXPECT_DOUBLE_EQ(op.tolerances.at(dtype::f32).atol, 1.0e-6);
  EXPECT_DOUBLE_EQ(op.tolerances.at(dtype::f32).rtol, 1.0e-4);
  EXPECT_DOUBLE_EQ(op.tolerances.at(dtype::bf16).atol, 1.0e-3);
  EXPECT_DOUBLE_EQ(op.tolerances.at(dtype::bf16).rtol, 1.6e-2);
}

TEST(load_operator, softmax_shapes_and_holdout_shapes) {
  const operator_spec op = load_softmax();
  ASSERT_EQ(op.shapes.size(), 2u);
  EXPECT_EQ(op.shapes[0].name, "ranking_logits");
  EXPECT_EQ(op.shapes[0].values, (std::map<std::string, int64_t>{{"B", 8192}, {"N", 1024}}));
  EXPECT_EQ(op.shapes[1].name, "wide_vocab");
  EXPECT_EQ(op.shapes[1].values, (std::map<std::string, int64_t>{{"B", 512}, {"N", 16384}}));
  ASSERT_EQ(op.holdout_shapes.size(), 2u);
  EXPECT_EQ(op.holdout_shapes[0].name, "odd_tail");
  EXPECT_EQ(op.holdout_shapes[0].values, (std::map<std::string, int64_t>{{"B", 37}, {"N", 1003}}));
  EXPECT_EQ(op.holdout_shapes[1].name, "single_row");
  // find_shape searches timed and holdout shapes.
  ASSERT_NE(op.find_shape("wide_vocab"), nullptr);
  ASSERT_NE(op.find_shape("single_row"), nullptr);
  EXPECT_EQ(op.find_shape("single_row")->values.at("N"), 4099);
  EXPECT_EQ(op.find_shape("no_such_shape"), nullptr);
}

TEST(load_operator, softmax_sources_resolve_relative_to_the_yaml) {
  const operator_spec op = load_softmax();
  EXPECT_EQ(op.reference, catalog_dir() / "softmax/reference.cpp");
  EXPECT_TRUE(fs::is_regular_file(op.reference)) << op.reference;
  EXPECT_EQ(op.baseline.source, catalog_dir() / "softmax/baseline.cpp");
  EXPECT_TRUE(fs::is_regular_file(op.baseline.source)) << op.baseline.source;
  EXPECT_NE(op.baseline.name.find("plain C++"), std::string::npos) << op.baseline.name;
  EXPECT_TRUE(op.baseline.libraries.empty());
}

TEST(resolve, softmax_timed_shape_dims_bytes_flops_per_variant) {
  const operator_spec op = load_softmax();
  const shape_point* s = op.find_shape("ranking_logits");
  ASSERT_NE(s, nullptr);
  auto fp32 = resolve(op, op.variants[0], *s, false);
  ASSERT_TRUE(fp32.has_value()) << fp32.error().message;
  EXPECT_EQ(fp32->shape_name, "ranking_logits");
  EXPECT_FALSE(fp32->holdout);
  ASSERT_EQ(fp32->inputs.size(), 1u);
  EXPECT_EQ(fp32->inputs[0].name, "x");
  EXPECT_EQ(fp32->inputs[0].type, dtype::f32);
  EXPECT_EQ(fp32->inputs[0].dims, (std::vector<int64_t>{8192, 1024}));
  EXPECT_EQ(fp32->inputs[0].numel(), 8192 * 1024);
  EXPECT_EQ(fp32->inputs[0].bytes(), size_t(8192) * 1024 * 4);
  ASSERT_EQ(fp32->outputs.size(), 1u);
  EXPECT_EQ(fp32->outputs[0].dims, (std::vector<int64_t>{8192, 1024}));
  EXPECT_DOUBLE_EQ(fp32->bytes, 2.0 * 8192 * 1024 * 4);
  EXPECT_DOUBLE_EQ(fp32->flops, 5.0 * 8192 * 1024);
  EXPECT_EQ(fp32->workspace_bytes, 0u);
  EXPECT_DOUBLE_EQ(fp32->symbols.at("B"), 8192);
  EXPECT_DOUBLE_EQ(fp32->symbols.at("sizeof_T"), 4);

  // bf16 halves the traffic; the arithmetic is the same.
  auto bf16 = resolve(op, op.variants[1], *s, false);
  ASSERT_TRUE(bf16.has_value()) << bf16.error().message;
  EXPECT_EQ(bf16->inputs[0].type, dtype::bf16);
  EXPECT_EQ(bf16->outputs[0].type, dtype::bf16);
  EXPECT_EQ(bf16->inputs[0].bytes(), size_t(8192) * 1024 * 2);
  EXPECT_DOUBLE_EQ(bf16->bytes, 2.0 * 8192 * 1024 * 2);
  EXPECT_DOUBLE_EQ(bf16->flops, 5.0 * 8192 * 1024);
  EXPECT_DOUBLE_EQ(bf16->symbols.at("sizeof_T"), 2);
}

TEST(resolve, softmax_holdout_shape) {
  const operator_spec op = load_softmax();
  const shape_point* s = op.find_shape("odd_tail");
  ASSERT_NE(s, nullptr);
  auto p = resolve(op, op.variants[0], *s, true);
  ASSERT_TRUE(p.has_value()) << p.error().message;
  EXPECT_TRUE(p->holdout);
  EXPECT_EQ(p->shape_name, "odd_tail");
  EXPECT_EQ(p->inputs[0].dims, (std::vector<int64_t>{37, 1003}));
  EXPECT_DOUBLE_EQ(p->bytes, 2.0 * 37 * 1003 * 4);
  EXPECT_DOUBLE_EQ(p->flops, 5.0 * 37 * 1003);
}

TEST(resolve, a_shape_point_missing_a_symbol_is_an_error_naming_it) {
  const operator_spec op = load_softmax();
  shape_point partial{"partial", {{"B", 4}}};
  auto p = resolve(op, op.variants[0], partial, false);
  ASSERT_FALSE(p.has_value());
  EXPECT_EQ(p.error().code, errc::invalid_input);
  EXPECT_NE(p.error().message.find("symbol 'N' is not bound"), std::string::npos) << p.error().message;
  EXPECT_NE(p.error().message.find("'partial'"), std::string::npos) << p.error().message;
}

TEST(tensor_dtype, maps_type_symbols_through_the_variant) {
  const operator_spec op = load_softmax();
  auto d = tensor_dtype(op, op.variants[1], op.inputs[0]);
  ASSERT_TRUE(d.has_value()) << d.error().message;
  EXPECT_EQ(*d, dtype::bf16);
  tensor_spec fixed{"idx", "int64", {"B"}};
  auto i = tensor_dtype(op, op.variants[1], fixed);
  ASSERT_TRUE(i.has_value());
  EXPECT_EQ(*i, dtype::i64);
  tensor_spec bad{"z", "U", {"B"}};
  auto e = tensor_dtype(op, op.variants[0], bad);
  ASSERT_FALSE(e.has_value());
  EXPECT_NE(e.error().message.find("'U'"), std::string::npos) << e.error().message;
}

// An operator with derived symbols, parameters and a workspace, written here
// so that the numbers are known: resolve() must evaluate all of them.
TEST(resolve, derived_symbols_params_and_workspace) {
  auto dir = temp_dir::create("kevolve-spec-test-");
  ASSERT_TRUE(dir.has_value()) << dir.error().message;
  const fs::path file = dir->path() / "pad_conv.yaml";
  const std::string ref = (catalog_dir() / "softmax/reference.cpp").string();
  const std::string base = (catalog_dir() / "softmax/baseline.cpp").string();
  std::ofstream(file) << "name: pad_conv\n"
                         "class: stencil\n"
                         "description: a test operator\n"
                         "variants:\n  f: {T: fp32, I: int32}\n  d: {T: fp64, I: int64}\n"
                         "symbols: [B, L, K]\n"
                         "derived:\n  P: \"floor(K / 2)\"\n  Lout: \"L + 2 * P - K + 1\"\n"
                         "inputs:\n  - {name: x, dtype: T, shape: [B, L]}\n"
                         "  - {name: w, dtype: fp32, shape: [K]}\n"
                         "  - {name: idx, dtype: I, shape: [\"ceil(L / 4)\"]}\n"
                         "outputs:\n  - {name: y, dtype: T, shape: [B, Lout]}\n"
                         "params:\n  - {name: padding, type: int, value: P}\n"
                         "  - {name: scale, type: float, value: \"1 / K\"}\n"
                         "generators:\n  x: [{dist: normal, mean: 0, std: 1}]\n"
                         "  w: [{dist: uniform, low: -1, high: 1}]\n"
                         "  idx: [{dist: randint, low: 0, high: \"L\"}]\n"
                         "shapes:\n  - {name: s, B: 3, L: 10, K: 5}\n  - {name: t, B: 1, L: 7, K: 3}\n"
                         "holdout_shapes:\n  - {name: h, B: 2, L: 9, K: 4}\n"
                         "bytes: \"(B * L + B * Lout) * sizeof(T) + K * sizeof(fp32) + ceil(L / 4) * sizeof(I)\"\n"
                         "flops: \"2 * B * Lout * K\"\n"
                         "workspace_bytes: \"Lout * sizeof(fp64)\"\n"
                         "tolerance:\n  fp32: {atol: 1e-5, rtol: 1e-4}\n  fp64: {atol: 1e-12, rtol: 1e-10}\n"
                         "max_speedup: 20\n"
                         "reference_max_flops: 1e6\n"
                         "reference: " << ref << "\n"
                         "baseline: {name: b, source: " << base << ", libraries: [openblas]}\n"
                         "allowed_libraries: [openblas]\n"
                         "torch: |\n  y = F.conv1d(x[:, None], w[None, None], padding=padding)\n  return y[:, 0] * scale\n";
  auto op = load_operator(file);
  ASSERT_TRUE(op.has_value()) << op.error().message;
  EXPECT_DOUBLE_EQ(op->max_speedup, 20.0);
  EXPECT_DOUBLE_EQ(op->reference_max_flops, 1e6);
  EXPECT_EQ(op->baseline.libraries, (std::vector<std::string>{"openblas"}));
  EXPECT_EQ(op->allowed_libraries, (std::vector<std::string>{"openblas"}));
  EXPECT_EQ(op->torch, "y = F.conv1d(x[:, None], w[None, None], padding=padding)\nreturn y[:, 0] * scale\n");
  ASSERT_EQ(op->derived.size(), 2u);
  EXPECT_EQ(op->derived[0].first, "P");  // file order: Lout uses P
  const variant* d = op->find_variant("d");
  ASSERT_NE(d, nullptr);
  auto p = resolve(*op, *d, *op->find_shape("s"), false);
  ASSERT_TRUE(p.has_value()) << p.error().message;
  // P = 2, Lout = 10 + 4 - 5 + 1 = 10
  EXPECT_DOUBLE_EQ(p->symbols.at("P"), 2);
  EXPECT_DOUBLE_EQ(p->symbols.at("Lout"), 10);
  ASSERT_EQ(p->inputs.size(), 3u);
  EXPECT_EQ(p->inputs[0].type, dtype::f64);
  EXPECT_EQ(p->inputs[1].type, dtype::f32);
  EXPECT_EQ(p->inputs[2].type, dtype::i64);
  EXPECT_EQ(p->inputs[2].dims, (std::vector<int64_t>{3}));
  EXPECT_EQ(p->outputs[0].dims, (std::vector<int64_t>{3, 10}));
  ASSERT_EQ(p->params.size(), 2u);
  EXPECT_EQ(p->params[0].name, "padding");
  EXPECT_FALSE(p->params[0].is_float);
  EXPECT_DOUBLE_EQ(p->params[0].value, 2);
  EXPECT_TRUE(p->params[1].is_float);
  EXPECT_DOUBLE_EQ(p->params[1].value, 0.2);
  EXPECT_DOUBLE_EQ(p->bytes, (3 * 10 + 3 * 10) * 8 + 5 * 4 + 3 * 8);
  EXPECT_DOUBLE_EQ(p->flops, 2 * 3 * 10 * 5);
  EXPECT_EQ(p->workspace_bytes, 10u * 8);

  auto small = resolve(*op, op->variants[0], *op->find_shape("t"), false);
  ASSERT_TRUE(small.has_value()) << small.error().message;
  // P = 1, Lout = 7 + 2 - 3 + 1 = 7
  EXPECT_EQ(small->outputs[0].dims, (std::vector<int64_t>{1, 7}));
  EXPECT_EQ(small->inputs[2].type, dtype::i32);
  EXPECT_DOUBLE_EQ(small->bytes, (7 + 7) * 4 + 3 * 4 + 2 * 4);
}

TEST(load_operator, missing_file_is_not_found) {
  auto op = load_operator(catalog_dir() / "no_such_operator.yaml");
  ASSERT_FALSE(op.has_value());
  EXPECT_EQ(op.error().code, errc::not_found);
  EXPECT_NE(op.error().message.find("no_such_operator.yaml"), std::string::npos) << op.error().message;
}

TEST(load_operator, a_directory_is_an_error_not_a_crash) {
  // `kevolve ops validate config/operators` is an easy slip. Run in a child
  // process so that a crash fails this test only.
  const fs::path dir = catalog_dir();
  EXPECT_EXIT(
      {
        auto op = load_operator(dir);
        const bool reported = !op && op.error().message.find(dir.string()) != std::string::npos;
        std::exit(reported ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "");
}

TEST(load_catalog, the_real_catalog_loads_and_every_operator_is_usable) {
  auto ops = load_catalog(catalog_dir());
  ASSERT_TRUE(ops.has_value()) << ops.error().message;
  size_t yaml_files = 0;
  for (const auto& e : fs::directory_iterator(catalog_dir())) yaml_files += e.path().extension() == ".yaml";
  EXPECT_EQ(ops->size(), yaml_files);
  EXPECT_GE(ops->size(), 10u);
  std::set<std::string> names;
  for (const auto& op : *ops) {
    SCOPED_TRACE(op.name);
    names.insert(op.name);
    EXPECT_EQ(op.name, op.file.stem().string());
    EXPECT_GE(op.shapes.size(), 2u);
    EXPECT_GE(op.holdout_shapes.size(), 1u);
    EXPECT_FALSE(op.variants.empty());
    // An operator from PyTorch alone (swiglu) has neither; every other has both.
    EXPECT_TRUE(op.torch_reference() ? op.baseline.source.empty() : fs::is_regular_file(op.reference));
    EXPECT_TRUE(op.baseline.source.empty() ? op.torch_reference() : fs::is_regular_file(op.baseline.source));
    EXPECT_FALSE(op.torch.empty()) << "every starter operator has its PyTorch version";
    // Every point resolves to positive traffic under every variant.
    for (const auto& v : op.variants)
      for (const auto* list : {&op.shapes, &op.holdout_shapes})
        for (const auto& s : *list) {
          auto p = resolve(op, v, s, list == &op.holdout_shapes);
          ASSERT_TRUE(p.has_value()) << p.error().message;
          EXPECT_GT(p->bytes, 0.0) << s.name;
        }
  }
  EXPECT_TRUE(names.count("softmax"));
  EXPECT_TRUE(std::is_sorted(ops->begin(), ops->end(),
                             [](const operator_spec& a, const operator_spec& b) { return a.name < b.name; }));
}

TEST(load_catalog, a_missing_directory_is_not_found) {
  auto ops = load_catalog(catalog_dir() / "no_such_dir");
  ASSERT_FALSE(ops.has_value());
  EXPECT_EQ(ops.error().code, errc::not_found);
}

TEST(find_operator, by_name_and_by_path) {
  auto by_name = find_operator("softmax");
  ASSERT_TRUE(by_name.has_value()) << by_name.error().message;
  EXPECT_EQ(by_name->name, "softmax");
  auto by_path = find_operator((testing::test_data() / "operators" / "t_softmax.yaml").string());
  ASSERT_TRUE(by_path.has_value()) << by_path.error().message;
  EXPECT_EQ(by_path->name, "t_softmax");
}

TEST(find_operator, unknown_name_is_not_found_and_points_to_ops_list) {
  auto op = find_operator("no_such_op");
  ASSERT_FALSE(op.has_value());
  EXPECT_EQ(op.error().code, errc::not_found);
  EXPECT_NE(op.error().message.find("unknown operator 'no_such_op'"), std::string::npos) << op.error().message;
  EXPECT_NE(op.error().message.find("kevolve ops list"), std::string::npos) << op.error().message;
}

}  // namespace
}  // namespace kevolve::spec
