// dtype names are the YAML spelling users write; sizes drive every byte count.
#include <gtest/gtest.h>

#include <string>

#include "spec/dtype.h"

namespace kevolve::spec {
namespace {

const dtype kAll[] = {dtype::f32, dtype::f16, dtype::bf16, dtype::i32, dtype::i64, dtype::f64};

TEST(dtype, names_round_trip) {
  for (dtype t : kAll) {
    const std::string n = dtype_name(t);
    auto back = parse_dtype(n);
    ASSERT_TRUE(back.has_value()) << n;
    EXPECT_EQ(*back, t) << n;
    EXPECT_NE(std::string(dtype_names_list()).find(n), std::string::npos) << n << " missing from the list";
  }
}

TEST(dtype, yaml_spellings_and_sizes) {
  struct row {
    const char* name;
    dtype type;
    size_t size;
    bool is_float;
  };
  for (const row& r : {row{"fp32", dtype::f32, 4, true}, row{"fp16", dtype::f16, 2, true},
                       row{"bf16", dtype::bf16, 2, true}, row{"fp64", dtype::f64, 8, true},
                       row{"int32", dtype::i32, 4, false}, row{"int64", dtype::i64, 8, false}}) {
    auto t = parse_dtype(r.name);
    ASSERT_TRUE(t.has_value()) << r.name;
    EXPECT_EQ(*t, r.type) << r.name;
    EXPECT_EQ(dtype_size(*t), r.size) << r.name;
    EXPECT_EQ(is_float(*t), r.is_float) << r.name;
  }
}

TEST(dtype, other_spellings_are_rejected) {
  for (const char* n : {"fp8", "float", "float32", "f32", "FP32", "int", "int8", "", " fp32", "T"})
    EXPECT_FALSE(parse_dtype(n).has_value()) << "\"" << n << "\" was accepted";
}

}  // namespace
}  // namespace kevolve::spec
