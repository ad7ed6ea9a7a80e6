// Hardware profiles are measured once (kevolve doctor) and cached as YAML:
// what is saved must come back unchanged, a damaged file must be an error.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>

#include "common/fs.h"
#include "spec/hardware_profile.h"

namespace kevolve::spec {
namespace {
namespace fs = std::filesystem;

hardware_profile sample() {
  hardware_profile hw;
  hw.name = "x86_avx512";
  hw.backend = "cpu";
  hw.model = "Intel(R) Xeon(R) Platinum 8480+: \"quoted\" # not a comment";
  hw.source = "measured";
  hw.threads = 2;
  hw.peak_bandwidth_gbs = 41.734567891234;
  hw.peak_gflops_fp32 = 1234.5678901234;
  hw.cache_bandwidth_gbs = 108.862;
  hw.measured_at = "2024-11-29T22:36:00Z";
  hw.fingerprint = "g++ 12.2.0|avx512f|2";
  return hw;
}

TEST(hardware_profile, save_then_load_round_trips_every_field) {
  auto dir = temp_dir::create("kevolve-hw-test-");
  ASSERT_TRUE(dir.has_value()) << dir.error().message;
  const fs::path f = dir->path() / "profiles" / "cpu-2.yaml";
  const hardware_profile hw = sample();
  ASSERT_TRUE(save_hardware_profile(f, hw).has_value());
  auto back = load_hardware_profile(f);
  ASSERT_TRUE(back.has_value()) << back.error().message;
  EXPECT_EQ(back->name, hw.name);
  EXPECT_EQ(back->backend, hw.backend);
  EXPECT_EQ(back->model, hw.model);
  EXPECT_EQ(back->source, hw.source);
  EXPECT_EQ(back->threads, hw.threads);
  EXPECT_DOUBLE_EQ(back->peak_bandwidth_gbs, hw.peak_bandwidth_gbs);
  EXPECT_DOUBLE_EQ(back->peak_gflops_fp32, hw.peak_gflops_fp32);
  EXPECT_DOUBLE_EQ(back->cache_bandwidth_gbs, hw.cache_bandwidth_gbs);
  EXPECT_EQ(back->measured_at, hw.measured_at);
  EXPECT_EQ(back->fingerprint, hw.fingerprint);
  EXPECT_DOUBLE_EQ(back->ridge_point(), hw.peak_gflops_fp32 / hw.peak_bandwidth_gbs);
  // Saving again overwrites in place and leaves one file.
  hardware_profile faster = hw;
  faster.peak_bandwidth_gbs = 99.5;
  ASSERT_TRUE(save_hardware_profile(f, faster).has_value());
  auto again = load_hardware_profile(f);
  ASSERT_TRUE(again.has_value()) << again.error().message;
  EXPECT_DOUBLE_EQ(again->peak_bandwidth_gbs, 99.5);
  EXPECT_EQ(std::distance(fs::directory_iterator(f.parent_path()), fs::directory_iterator()), 1);
}

TEST(hardware_profile, missing_file_is_not_found) {
  auto dir = temp_dir::create("kevolve-hw-test-");
  ASSERT_TRUE(dir.has_value());
  auto hw = load_hardware_profile(dir->path() / "absent.yaml");
  ASSERT_FALSE(hw.has_value());
  EXPECT_EQ(hw.error().code, errc::not_found);
}

TEST(hardware_profile, bad_values_are_invalid_input_with_line_and_key) {
  auto dir = temp_dir::create("kevolve-hw-test-");
  ASSERT_TRUE(dir.has_value());
  const fs::path f = dir->path() / "bad.yaml";
  std::ofstream(f) << "name: x\nbackend: cpu\nsource: measured\npeak_bandwidth_gbs: 0\npeak_gflops_fp32: lots\nbogus: 1\n";
  auto hw = load_hardware_profile(f);
  ASSERT_FALSE(hw.has_value());
  EXPECT_EQ(hw.error().code, errc::invalid_input);
  const std::string& m = hw.error().message;
  EXPECT_NE(m.find(f.string() + ":4: 'peak_bandwidth_gbs' must be positive"), std::string::npos) << m;
  EXPECT_NE(m.find(f.string() + ":5: 'peak_gflops_fp32' must be a number"), std::string::npos) << m;
  EXPECT_NE(m.find(f.string() + ":6: 'bogus' is not a known key"), std::string::npos) << m;
}

TEST(hardware_profile, truncated_file_is_an_error_not_a_zero_profile) {
  auto dir = temp_dir::create("kevolve-hw-test-");
  ASSERT_TRUE(dir.has_value());
  const fs::path f = dir->path() / "cut.yaml";
  std::ofstream(f) << "name: x\nbackend: cpu\nsource: measured\n";
  auto hw = load_hardware_profile(f);
  ASSERT_FALSE(hw.has_value());
  EXPECT_NE(hw.error().message.find("'peak_bandwidth_gbs' is required but missing"), std::string::npos)
      << hw.error().message;
}

}  // namespace
}  // namespace kevolve::spec
