#include "transport/envelope.h"

#include <gtest/gtest.h>

#include "transport/launch.h"

namespace kevolve::transport {
namespace {

TEST(Envelope, RoundTripKeepsEveryByte) {
  std::string payload("a\0b\xff kernel", 12);
  const auto bytes = frame(payload);
  EXPECT_EQ(bytes.size(), kHeaderBytes + payload.size());
  auto back = unframe(bytes, 3);
  ASSERT_TRUE(back.has_value()) << back.error().message;
  EXPECT_EQ(std::string(*back), payload);
}

TEST(Envelope, AnotherProtocolVersionIsRefusedWithBothVersionsNamed) {
  auto back = unframe(frame("x", kProtocolVersion + 1), 4);
  ASSERT_FALSE(back.has_value());
  EXPECT_NE(back.error().message.find("rank 4 speaks protocol version " + std::to_string(kProtocolVersion + 1)),
            std::string::npos) << back.error().message;
  EXPECT_NE(back.error().message.find("same kevolve build"), std::string::npos);
}

TEST(Envelope, TruncatedAndForeignFramesAreRefused) {
  auto bytes = frame("payload");
  bytes.pop_back();
  auto cut = unframe(bytes, 1);
  ASSERT_FALSE(cut.has_value());
  EXPECT_NE(cut.error().message.find("truncated"), std::string::npos);
  auto foreign = unframe(std::vector<char>(20, 'z'), 1);
  ASSERT_FALSE(foreign.has_value());
  EXPECT_NE(foreign.error().message.find("not a kevolve message"), std::string::npos);
  EXPECT_FALSE(unframe({}, 1).has_value());
}

env_lookup env_of(std::map<std::string, std::string> vars) {
  auto shared = std::make_shared<std::map<std::string, std::string>>(std::move(vars));
  return [shared](const char* name) -> const char* {
    auto it = shared->find(name);
    return it == shared->end() ? nullptr : it->second.c_str();
  };
}

TEST(Launch, AloneWithoutLauncherVariables) {
  const launch_info i = detect_launch(env_of({{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "4"}}));
  EXPECT_FALSE(i.under_launcher);  // a bare srun without PMI: no MPI to join
  EXPECT_EQ(i.size, 1);
}

TEST(Launch, OpenMpiAndPmixVariables) {
  launch_info o = detect_launch(env_of({{"OMPI_COMM_WORLD_RANK", "3"}, {"OMPI_COMM_WORLD_SIZE", "5"},
                                        {"OMPI_COMM_WORLD_LOCAL_RANK", "1"}}));
  EXPECT_TRUE(o.under_launcher);
  EXPECT_EQ(o.rank, 3);
  EXPECT_EQ(o.size, 5);
  EXPECT_EQ(o.local_rank, 1);
  launch_info s = detect_launch(env_of({{"PMIX_RANK", "2"}, {"SLURM_PROCID", "2"}, {"SLURM_NTASKS", "8"}, {"SLURM_LOCALID", "0"}}));
  EXPECT_TRUE(s.under_launcher);
  EXPECT_EQ(s.launcher, "slurm");
  EXPECT_EQ(s.rank, 2);
  EXPECT_EQ(s.size, 8);
}

}  // namespace
}  // namespace kevolve::transport
