#include "actors/codec.h"

#include <gtest/gtest.h>

#include <caf/all.hpp>

#include "actors/messages.h"
#include "actors/system_config.h"
#include "transport/envelope.h"

namespace kevolve::actors {
namespace {

class Codec : public ::testing::Test {
 protected:
  system_config cfg{1};
  caf::actor_system sys{cfg};

  caf::message round_trip(const caf::message& m) {
    auto bytes = encode(sys, m);
    EXPECT_TRUE(bytes.has_value()) << (bytes ? "" : bytes.error().message);
    auto back = decode(sys, *bytes, 1);
    EXPECT_TRUE(back.has_value()) << (back ? "" : back.error().message);
    return *back;
  }
};

TEST_F(Codec, EvalRequestAndResultRoundTrip) {
  sweep::eval_request r;
  r.id = 42;
  r.task_id = "softmax/fp32/cpu";
  r.op_source = "/shared/ops/softmax.yaml";
  r.op_hash = "abc";
  r.variant = "fp32";
  r.backend = "cpu";
  r.settings.threads = 3;
  r.settings.budget_seconds = 0.25;
  r.settings.seed = 1ull << 60;
  r.settings.torch_baselines = 0;
  r.node = 17;
  r.code = std::string(5000, 'k') + std::string("\0\xff", 2);
  auto m = round_trip(caf::make_message(r));
  ASSERT_TRUE(m.match_elements<sweep::eval_request>());
  const auto& b = m.get_as<sweep::eval_request>(0);
  EXPECT_EQ(b.id, r.id);
  EXPECT_EQ(b.code, r.code);
  EXPECT_EQ(b.settings.seed, r.settings.seed);
  EXPECT_EQ(b.settings.budget_seconds, r.settings.budget_seconds);
  EXPECT_EQ(b.settings.torch_baselines, 0);

  sweep::eval_result v;
  v.id = 42;
  v.rank = 3;
  v.status = "wrong_result";
  v.fitness = 0;
  v.reason = "max error 3 at index 9";
  store::shape_measurement s;
  s.node = 17;
  s.shape = "rows=4096";
  s.holdout = true;
  s.speedup = 2.5;
  s.bottleneck = "memory-bound";
  s.torch_eager_median_s = 3e-4;
  s.torch_compile_median_s = 2e-4;
  s.profile = "dram 41% of peak, occupancy 22%";
  s.metrics = {{"dram_pct", 41.25}, {"occupancy_pct", 22.0}, {"stall_long_scoreboard", 7.5}};
  s.attainable_fraction = 0.805;
  s.bound = "launch + integer engines";
  v.shapes = {s, s};
  auto mv = round_trip(caf::make_message(v));
  ASSERT_TRUE(mv.match_elements<sweep::eval_result>());
  const auto& bv = mv.get_as<sweep::eval_result>(0);
  EXPECT_EQ(bv.reason, v.reason);
  ASSERT_EQ(bv.shapes.size(), 2u);
  EXPECT_EQ(bv.shapes[1].shape, "rows=4096");
  EXPECT_TRUE(bv.shapes[1].holdout);
  EXPECT_EQ(bv.shapes[1].speedup, 2.5);
  EXPECT_EQ(bv.shapes[1].torch_eager_median_s, 3e-4);
  EXPECT_EQ(bv.shapes[1].torch_compile_median_s, 2e-4);
  EXPECT_EQ(bv.shapes[1].profile, s.profile);
  EXPECT_EQ(bv.shapes[1].metrics, s.metrics);  // what the rules on rank 0 read
  EXPECT_EQ(bv.shapes[1].attainable_fraction, 0.805);  // what rank 0 stores
  EXPECT_EQ(bv.shapes[1].bound, s.bound);
}

TEST_F(Codec, ControlMessagesRoundTrip) {
  sweep::rank_hello h;
  h.rank = 5;
  h.host = "node17";
  h.backend = "cuda";
  h.error = "no GPU";
  auto mh = round_trip(caf::make_message(h));
  ASSERT_TRUE(mh.match_elements<sweep::rank_hello>());
  EXPECT_EQ(mh.get_as<sweep::rank_hello>(0).error, "no GPU");
  store::rank_record beat;
  beat.rank = 2;
  beat.by_status = {{"ok", 3}, {"timeout", 1}};
  beat.cpu_seconds = 1.5;
  auto mb = round_trip(caf::make_message(beat));
  ASSERT_TRUE(mb.match_elements<store::rank_record>());
  EXPECT_EQ(mb.get_as<store::rank_record>(0).by_status.at("timeout"), 1);
  auto ms = round_trip(caf::make_message(shutdown_msg{false, false}));
  ASSERT_TRUE(ms.match_elements<shutdown_msg>());
  EXPECT_FALSE(ms.get_as<shutdown_msg>(0).finalize);
  auto mn = round_trip(caf::make_message(signal_notice{4, 15}));
  EXPECT_EQ(mn.get_as<signal_notice>(0).signo, 15);
  auto mst = round_trip(caf::make_message(sweep::rank_start{1}));
  EXPECT_EQ(mst.get_as<sweep::rank_start>(0).device_index, 1);
}

TEST_F(Codec, AFrameOfAnotherVersionIsRefused) {
  auto bytes = encode(sys, caf::make_message(shutdown_msg{true}));
  ASSERT_TRUE(bytes.has_value());
  bytes->at(4) = char(transport::kProtocolVersion + 1);  // the version field
  auto back = decode(sys, *bytes, 6);
  ASSERT_FALSE(back.has_value());
  EXPECT_NE(back.error().message.find("rank 6 speaks protocol version"), std::string::npos) << back.error().message;
}

TEST_F(Codec, GarbageAfterAValidFrameHeaderIsRefused) {
  auto bytes = transport::frame(std::string(64, '\x7f'));
  EXPECT_FALSE(decode(sys, bytes, 2).has_value());
}

struct not_registered {
  int x = 0;
};
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, not_registered& v) {
  return f(caf::meta::type_name("not_registered"), v.x);
}

TEST_F(Codec, AnUnregisteredTypeIsAnErrorNotAnEmptyMessage) {
  auto bytes = encode(sys, caf::make_message(not_registered{3}));
  EXPECT_FALSE(bytes.has_value());
}

}  // namespace
}  // namespace kevolve::actors
