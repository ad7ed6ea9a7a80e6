// content_hash keys the compile cache: a key that changes between runs loses
// the cache, two inputs with one key serve the wrong shared object.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "common/hash.h"

namespace kevolve {
namespace {

bool is_hex32(const std::string& s) {
  if (s.size() != 32) return false;
  for (char c : s)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

TEST(content_hash, is_32_lowercase_hex_digits) {
  EXPECT_TRUE(is_hex32(content_hash({"g++ 12 -O3", "int main() {}"})));
  EXPECT_TRUE(is_hex32(content_hash({})));
}

TEST(content_hash, is_stable_across_calls_and_builds) {
  const std::string a = content_hash({"toolchain", "source"});
  EXPECT_EQ(a, content_hash({"toolchain", "source"}));
  EXPECT_EQ(a, content_hash({std::string("toolchain"), std::string_view("source")}));
  // A fixed value, XXH3-128 of the 8-byte little-endian length 3 followed by
  // "abc": a change here invalidates every compile cache on disk.
  EXPECT_EQ(content_hash({"abc"}), "45bcdc88efffd44520b986a5e7fe1438");
}

// The compile cache hashes a list it builds at run time: the same key as the
// same parts written out, so existing cache entries stay valid.
TEST(content_hash, a_vector_of_parts_hashes_like_the_same_parts_listed) {
  EXPECT_EQ(content_hash(std::vector<std::string>{"abc"}), "45bcdc88efffd44520b986a5e7fe1438");
  EXPECT_EQ(content_hash(std::vector<std::string>{"src", "-O3 ", "g++ 12", ""}), content_hash({"src", "-O3 ", "g++ 12", ""}));
  EXPECT_EQ(content_hash(std::vector<std::string>{}), content_hash({}));
}

TEST(content_hash, parts_are_length_prefixed) {
  EXPECT_NE(content_hash({"ab", "c"}), content_hash({"a", "bc"}));
  EXPECT_NE(content_hash({"abc"}), content_hash({"ab", "c"}));
  EXPECT_NE(content_hash({"", "x"}), content_hash({"x"}));
  EXPECT_NE(content_hash({"x", ""}), content_hash({"x"}));
  EXPECT_NE(content_hash({}), content_hash({""}));
}

TEST(content_hash, differs_for_different_content) {
  std::set<std::string> seen;
  for (int i = 0; i < 200; ++i) seen.insert(content_hash({"flags", "kernel " + std::to_string(i)}));
  EXPECT_EQ(seen.size(), 200u);
}

TEST(hash_bytes, depends_on_content_and_seed) {
  const char a[] = "0123456789abcdef";
  const char b[] = "0123456789abcdeF";
  EXPECT_EQ(hash_bytes(a, 16), hash_bytes(a, 16));
  EXPECT_NE(hash_bytes(a, 16), hash_bytes(b, 16));
  EXPECT_NE(hash_bytes(a, 16), hash_bytes(a, 15));
  EXPECT_NE(hash_bytes(a, 16, 1), hash_bytes(a, 16, 2));
}

}  // namespace
}  // namespace kevolve
