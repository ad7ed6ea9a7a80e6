// bytes_floor: the traffic bound used to call a kernel impossibly fast.
#include <gtest/gtest.h>

#include <fstream>

#include "common/fs.h"
#include "spec/operator_loader.h"
#include "spec_test_util.h"

namespace kevolve::spec {
namespace {

TEST(BytesFloor, DefaultsToBytes) {
  auto op = load_operator(testing::catalog_dir() / "softmax.yaml");
  ASSERT_TRUE(op.has_value()) << op.error().message;
  auto p = resolve(*op, op->variants[0], op->shapes[0], false);
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->bytes_floor, p->bytes);
}

TEST(BytesFloor, GatherOperatorsCountOnlyCertainTraffic) {
  auto op = load_operator(testing::catalog_dir() / "embedding_bag_sum.yaml");
  ASSERT_TRUE(op.has_value()) << op.error().message;
  auto p = resolve(*op, op->variants[0], op->shapes[0], false);
  ASSERT_TRUE(p.has_value());
  const double B = p->symbols.at("B"), D = p->symbols.at("D"), NNZ = p->symbols.at("NNZ");
  EXPECT_DOUBLE_EQ(p->bytes_floor, 8 * NNZ + 8 * (B + 1) + B * D * 4);
  EXPECT_LT(p->bytes_floor, p->bytes);
}

TEST(BytesFloor, AboveBytesIsAnError) {
  auto dir = temp_dir::create("kevolve-floor-");
  ASSERT_TRUE(dir.has_value());
  auto text = read_file(testing::catalog_dir() / "softmax.yaml");
  ASSERT_TRUE(text.has_value());
  std::string yaml = *text;
  const std::string ref = (testing::catalog_dir() / "softmax").string();
  for (const char* f : {"reference.cpp", "baseline.cpp", "baseline.cu", "mtia_baseline.cpp"}) {
    const std::string from = std::string(": softmax/") + f, to = ": " + ref + "/" + f;
    for (size_t at = 0; (at = yaml.find(from, at)) != std::string::npos; at += to.size())  // cuda and hip share baseline.cu
      yaml.replace(at, from.size(), to);
  }
  yaml.replace(yaml.find("name: softmax"), 13, "name: floor_op");
  yaml += "bytes_floor: \"4 * B * N * sizeof(T)\"\n";
  const auto file = dir->path() / "floor_op.yaml";
  std::ofstream(file) << yaml;
  auto op = load_operator(file);
  ASSERT_FALSE(op.has_value());
  EXPECT_NE(op.error().message.find("'bytes_floor' must be between 0 and 'bytes'"), std::string::npos) << op.error().message;
}

}  // namespace
}  // namespace kevolve::spec
