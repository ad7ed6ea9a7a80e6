// bytes_floor: the traffic bound used to call a kernel impossibly fast.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <vector>

#include "common/fs.h"
#include "spec/operator_loader.h"
#include "spec_test_util.h"

namespace kevolve::spec {
namespace {

// A catalog operator's YAML text with its sources (`name/...`) made absolute,
// so a changed copy loads from another directory.
std::string catalog_yaml(const std::string& name) {
  auto text = read_file(testing::catalog_dir() / (name + ".yaml"));
  EXPECT_TRUE(text.has_value()) << name;
  std::string yaml = text ? *text : "";
  const std::string from = ": " + name + "/", to = ": " + (testing::catalog_dir() / name).string() + "/";
  for (size_t at = 0; (at = yaml.find(from, at)) != std::string::npos; at += to.size()) yaml.replace(at, from.size(), to);
  return yaml;
}

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

// sequence_truncate reads min(len_b, K) rows of every sequence: its bytes
// before inputs exist assume min(TOTAL, B*K) rows, an input set's count its
// own (here K = 64: lengths 100, 0, 10 and the rest 64 -> 64 + 0 + 10 + ...).
TEST(BytesFloor, TruncatingOperatorsCountTheRowsEachInputSetKeeps) {
  auto op = load_operator(testing::catalog_dir() / "sequence_truncate.yaml");
  ASSERT_TRUE(op.has_value()) << op.error().message;
  auto p = resolve(*op, op->variants[0], op->shapes[0], false);
  ASSERT_TRUE(p.has_value()) << p.error().message;
  const double B = p->symbols.at("B"), K = p->symbols.at("K"), D = p->symbols.at("D"), T = p->symbols.at("TOTAL");
  ASSERT_EQ(K, 64);
  EXPECT_DOUBLE_EQ(p->bytes, std::min(T, B * K) * D * 4 + B * K * D * 4 + 16 * (B + 1));
  std::vector<int64_t> off(size_t(B) + 1, 0);
  const int64_t len[3] = {100, 0, 10};
  for (size_t b = 0; b + 1 < off.size(); ++b) off[b + 1] = off[b] + (b < 3 ? len[b] : 64);
  const size_t offsets = 1;
  ASSERT_EQ(p->inputs[offsets].name, "offsets");
  auto bytes = set_bytes(*op, *p, [&](size_t i) -> const void* { return i == offsets ? off.data() : nullptr; });
  ASSERT_TRUE(bytes.has_value()) << bytes.error().message;
  const double kept = 64 + 0 + 10 + 64 * (B - 3);
  EXPECT_DOUBLE_EQ(*bytes, kept * D * 4 + B * K * D * 4 + 16 * (B + 1));
  EXPECT_LT(*bytes, p->bytes);
  // An operator without data symbols: every set costs the shape's bytes.
  auto soft = load_operator(testing::catalog_dir() / "softmax.yaml");
  ASSERT_TRUE(soft.has_value());
  auto q = resolve(*soft, soft->variants[0], soft->shapes[0], false);
  ASSERT_TRUE(q.has_value());
  auto same = set_bytes(*soft, *q, [](size_t) -> const void* { return nullptr; });
  ASSERT_TRUE(same.has_value());
  EXPECT_EQ(*same, q->bytes);
}

// The floor guards every input set, so it may not use a data symbol (it
// would see its bound, the most any set needs).
TEST(BytesFloor, DataSymbolsCountOnlyInBytes) {
  auto dir = temp_dir::create("kevolve-floor-");
  ASSERT_TRUE(dir.has_value());
  const std::string yaml = catalog_yaml("sequence_truncate");
  const std::string floor = "bytes_floor: \"B*K*D*sizeof(T) + 16*(B+1)\"";
  ASSERT_NE(yaml.find(floor), std::string::npos);
  const auto file = dir->path() / "sequence_truncate.yaml";
  std::string with_kept = yaml;
  with_kept.replace(with_kept.find(floor), floor.size(), "bytes_floor: \"KEPT*D*sizeof(T) + 16*(B+1)\"");
  std::ofstream(file) << with_kept;
  auto op = load_operator(file);
  ASSERT_FALSE(op.has_value());
  EXPECT_NE(op.error().message.find("'bytes_floor' uses unknown symbol 'KEPT'"), std::string::npos) << op.error().message;
  // Without a floor of its own the floor would be bytes at the bound.
  std::string no_floor = yaml;
  no_floor.replace(no_floor.find(floor), floor.size(), "");
  std::ofstream(file, std::ios::trunc) << no_floor;
  auto op2 = load_operator(file);
  ASSERT_FALSE(op2.has_value());
  EXPECT_NE(op2.error().message.find("'data_symbols' needs a 'bytes_floor'"), std::string::npos) << op2.error().message;
}

TEST(BytesFloor, AboveBytesIsAnError) {
  auto dir = temp_dir::create("kevolve-floor-");
  ASSERT_TRUE(dir.has_value());
  std::string yaml = catalog_yaml("softmax");
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
