// The mtia_emu hardware profiles: the shipped YAML files load, equal the
// emulator's built-in parameter sets (value and provenance), and damaged
// files fail with file:line, key and expectation.
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <sstream>

#include "common/fs.h"
#include "common/paths.h"
#include "spec/mtia_profile.h"

namespace kevolve::spec {
namespace {
namespace fs = std::filesystem;
namespace mtia = emu::mtia;

void expect_same(const mtia::params& got, const mtia::params& want) {
  EXPECT_EQ(got.name, want.name);
  const auto& t = mtia::param_table();
  for (std::size_t i = 0; i < t.size(); ++i) {
    EXPECT_DOUBLE_EQ(got.*(t[i].field), want.*(t[i].field)) << t[i].key;
    EXPECT_EQ(got.prov[i], want.prov[i]) << t[i].key;
    EXPECT_FALSE(got.source[i].empty()) << t[i].key;
  }
}

TEST(mtia_profile, shipped_profiles_equal_the_built_in_parameter_sets) {
  auto p2i = load_mtia_profile(data_root() / "config" / "hardware" / "mtia2i.yaml");
  ASSERT_TRUE(p2i.has_value()) << p2i.error().message;
  expect_same(*p2i, mtia::mtia2i());
  auto p300 = load_mtia_profile(data_root() / "config" / "hardware" / "mtia300.yaml");
  ASSERT_TRUE(p300.has_value()) << p300.error().message;
  expect_same(*p300, mtia::mtia300());
}

std::string shipped() {
  std::ifstream in(data_root() / "config" / "hardware" / "mtia2i.yaml");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string load_error(const std::string& text) {
  auto dir = temp_dir::create("kevolve-mtia-profile-");
  EXPECT_TRUE(dir.has_value());
  const fs::path f = dir->path() / "bad.yaml";
  std::ofstream(f) << text;
  auto p = load_mtia_profile(f);
  EXPECT_FALSE(p.has_value());
  return p.has_value() ? "" : p.error().message;
}

TEST(mtia_profile, damaged_profiles_name_file_line_key_and_expectation) {
  const std::string good = shipped();
  const struct {
    std::string from, to, expect;
  } cases[] = {
      {"  dram_efficiency: {value: 0.97,", "  dram_efficiency: {value: 1.5,",
       "bad.yaml:20: 'params.dram_efficiency.value' must be between 0.1 and 1 fraction, got 1.5"},
      {"provenance: assumed, source: \"not published; mtia.md 6.3\"}  # bytes/cycle",
       "provenance: guessed, source: \"x\"}  # bytes/cycle", "'params.fi_bytes_per_cycle.provenance' must be published, derived or assumed"},
      {"  pe_rows: {value: 8,", "  pe_rows: {value: 8.5,", "'params.pe_rows.value' must be a whole number"},
      {"  issue_cycles:", "  issue_cycle:", "'params.issue_cycles' is required but missing"},
      {"backend: mtia_emu", "backend: cuda", "'backend' must be mtia_emu"},
  };
  for (const auto& c : cases) {
    const auto at = good.find(c.from);
    ASSERT_NE(at, std::string::npos) << c.from;
    std::string text = good;
    text.replace(at, c.from.size(), c.to);
    const std::string msg = load_error(text);
    EXPECT_NE(msg.find(c.expect), std::string::npos) << msg;
  }
  EXPECT_NE(load_error(good + "  warp_size: {value: 32, provenance: assumed, source: x}\n").find("'params.warp_size' is not a known key"),
            std::string::npos);
}

}  // namespace
}  // namespace kevolve::spec
