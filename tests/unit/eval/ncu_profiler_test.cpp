// Nsight Compute's output as kevolve reads it: the CSV of the details page
// (one row per kernel and metric) in the column layouts ncu versions write,
// folded over the kernels of one call; errors ncu prints; the metric list.
#include <gtest/gtest.h>

#include <algorithm>

#include "eval/backends/ncu_profiler.h"

namespace kevolve::eval::ncu {
namespace {

// Two kernels of one call, as ncu 2023+ writes them (Block/Grid/Device/CC
// columns), with the ==PROF== chatter around them.
const char* kTwoKernels =
    "==PROF== Connected to process 4242 (/usr/lib/kevolve/kevolve-cuda-worker)\n"
    "==PROF== Profiling \"gemm_tile\" - 0: 0%....50%....100% - 9 passes\n"
    "==PROF== Profiling \"bias_relu\" - 1: 0%....50%....100% - 9 passes\n"
    "==PROF== Disconnected from process 4242\n"
    "\"ID\",\"Process ID\",\"Process Name\",\"Host Name\",\"Kernel Name\",\"Context\",\"Stream\",\"Block Size\","
    "\"Grid Size\",\"Device\",\"CC\",\"Section Name\",\"Metric Name\",\"Metric Unit\",\"Metric Value\"\n"
    "\"0\",\"4242\",\"kevolve-cuda-worker\",\"127.0.0.1\",\"gemm_tile(float const*, float*, int)\",\"1\",\"7\","
    "\"(256, 1, 1)\",\"(132, 1, 1)\",\"0\",\"9.0\",\"Command line profiler metrics\",\"gpu__time_duration.sum\","
    "\"nsecond\",\"300,000\"\n"
    "\"0\",\"4242\",\"kevolve-cuda-worker\",\"127.0.0.1\",\"gemm_tile(float const*, float*, int)\",\"1\",\"7\","
    "\"(256, 1, 1)\",\"(132, 1, 1)\",\"0\",\"9.0\",\"Command line profiler metrics\","
    "\"dram__throughput.avg.pct_of_peak_sustained_elapsed\",\"%\",\"20\"\n"
    "\"0\",\"4242\",\"kevolve-cuda-worker\",\"127.0.0.1\",\"gemm_tile(float const*, float*, int)\",\"1\",\"7\","
    "\"(256, 1, 1)\",\"(132, 1, 1)\",\"0\",\"9.0\",\"Command line profiler metrics\",\"dram__bytes_read.sum\","
    "\"byte\",\"400,000,000\"\n"
    "\"0\",\"4242\",\"kevolve-cuda-worker\",\"127.0.0.1\",\"gemm_tile(float const*, float*, int)\",\"1\",\"7\","
    "\"(256, 1, 1)\",\"(132, 1, 1)\",\"0\",\"9.0\",\"Command line profiler metrics\","
    "\"sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active\",\"%\",\"70\"\n"
    "\"0\",\"4242\",\"kevolve-cuda-worker\",\"127.0.0.1\",\"gemm_tile(float const*, float*, int)\",\"1\",\"7\","
    "\"(256, 1, 1)\",\"(132, 1, 1)\",\"0\",\"9.0\",\"Command line profiler metrics\",\"launch__registers_per_thread\","
    "\"register/thread\",\"168\"\n"
    "\"0\",\"4242\",\"kevolve-cuda-worker\",\"127.0.0.1\",\"gemm_tile(float const*, float*, int)\",\"1\",\"7\","
    "\"(256, 1, 1)\",\"(132, 1, 1)\",\"0\",\"9.0\",\"Command line profiler metrics\","
    "\"smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio\",\"\",\"2.5\"\n"
    "\"1\",\"4242\",\"kevolve-cuda-worker\",\"127.0.0.1\",\"bias_relu(float*, int)\",\"1\",\"7\","
    "\"(256, 1, 1)\",\"(528, 1, 1)\",\"0\",\"9.0\",\"Command line profiler metrics\",\"gpu__time_duration.sum\","
    "\"nsecond\",\"100,000\"\n"
    "\"1\",\"4242\",\"kevolve-cuda-worker\",\"127.0.0.1\",\"bias_relu(float*, int)\",\"1\",\"7\","
    "\"(256, 1, 1)\",\"(528, 1, 1)\",\"0\",\"9.0\",\"Command line profiler metrics\","
    "\"dram__throughput.avg.pct_of_peak_sustained_elapsed\",\"%\",\"80\"\n"
    "\"1\",\"4242\",\"kevolve-cuda-worker\",\"127.0.0.1\",\"bias_relu(float*, int)\",\"1\",\"7\","
    "\"(256, 1, 1)\",\"(528, 1, 1)\",\"0\",\"9.0\",\"Command line profiler metrics\",\"dram__bytes_write.sum\","
    "\"byte\",\"400,000,000\"\n"
    "\"1\",\"4242\",\"kevolve-cuda-worker\",\"127.0.0.1\",\"bias_relu(float*, int)\",\"1\",\"7\","
    "\"(256, 1, 1)\",\"(528, 1, 1)\",\"0\",\"9.0\",\"Command line profiler metrics\",\"launch__registers_per_thread\","
    "\"register/thread\",\"32\"\n"
    "\"1\",\"4242\",\"kevolve-cuda-worker\",\"127.0.0.1\",\"bias_relu(float*, int)\",\"1\",\"7\","
    "\"(256, 1, 1)\",\"(528, 1, 1)\",\"0\",\"9.0\",\"Command line profiler metrics\","
    "\"smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio\",\"\",\"n/a\"\n";

TEST(NcuCsv, KernelsOfOneCallAreFoldedByDuration) {
  auto p = parse_csv(kTwoKernels);
  ASSERT_TRUE(p.has_value()) << p.error().message;
  const auto& m = p->metrics;
  EXPECT_DOUBLE_EQ(m.at("kernels"), 2);
  EXPECT_DOUBLE_EQ(m.at("duration_us"), 400);  // 300 + 100 us
  // Weighted by each kernel's time: (20*300 + 80*100) / 400.
  EXPECT_DOUBLE_EQ(m.at("dram_pct"), 35);
  // 800 MB in 400 us.
  EXPECT_DOUBLE_EQ(m.at("dram_gbs"), 2000);
  EXPECT_DOUBLE_EQ(m.at("registers"), 168);
  // Only the GEMM reported the tensor pipe: the fold weighs over those who did.
  EXPECT_DOUBLE_EQ(m.at("tensor_pct"), 70);
  EXPECT_DOUBLE_EQ(m.at("stall_barrier"), 2.5);
  EXPECT_EQ(m.count("stall_long_scoreboard"), 0u) << "n/a is no value";
  EXPECT_EQ(m.count("dram_read_bytes"), 0u) << "raw byte counts fold into dram_gbs";
  EXPECT_EQ(p->summary,
            "ncu: 2 kernels, 400.0 us; DRAM 35% of peak (2000 GB/s); tensor 70%; 168 registers; "
            "top stall barrier (2.50 warps per issue)");
}

// Older ncu: a "Kernel Time" column and no launch geometry; units not base.
TEST(NcuCsv, OlderColumnLayoutAndUnitsAreRead) {
  const std::string csv =
      "\"ID\",\"Process ID\",\"Process Name\",\"Host Name\",\"Kernel Name\",\"Kernel Time\",\"Context\",\"Stream\","
      "\"Section Name\",\"Metric Name\",\"Metric Unit\",\"Metric Value\"\n"
      "\"0\",\"20798\",\"w\",\"127.0.0.1\",\"k\",\"2024-Nov-13 18:14:36\",\"1\",\"7\",\"Command line profiler metrics\","
      "\"gpu__time_duration.sum\",\"usecond\",\"152.19\"\n"
      "\"0\",\"20798\",\"w\",\"127.0.0.1\",\"k\",\"2024-Nov-13 18:14:36\",\"1\",\"7\",\"Command line profiler metrics\","
      "\"dram__bytes_read.sum\",\"Mbyte\",\"608.76\"\n"
      "\"0\",\"20798\",\"w\",\"127.0.0.1\",\"k\",\"2024-Nov-13 18:14:36\",\"1\",\"7\",\"Command line profiler metrics\","
      "\"sm__warps_active.avg.pct_of_peak_sustained_active\",\"%\",\"61.5\"\n";
  auto p = parse_csv(csv);
  ASSERT_TRUE(p.has_value()) << p.error().message;
  EXPECT_DOUBLE_EQ(p->metrics.at("duration_us"), 152.19);
  EXPECT_NEAR(p->metrics.at("dram_gbs"), 608.76e6 / 152.19e-6 / 1e9, 1e-6);
  EXPECT_DOUBLE_EQ(p->metrics.at("occupancy_pct"), 61.5);
  EXPECT_DOUBLE_EQ(p->metrics.at("kernels"), 1);
}

// ncu 2025 on an H200 spells base units short: a 3.584 us kernel's duration
// is "ns","3,584" (read once as 3,584 us when "ns" was not known). A time in
// a unit kevolve does not know is dropped, not taken as microseconds.
TEST(NcuCsv, ShortUnitSpellingsAreReadAndUnknownTimeUnitsDropped) {
  const std::string head =
      "\"ID\",\"Process ID\",\"Process Name\",\"Host Name\",\"Kernel Name\",\"Context\",\"Stream\",\"Block Size\","
      "\"Grid Size\",\"Device\",\"CC\",\"Section Name\",\"Metric Name\",\"Metric Unit\",\"Metric Value\"\n";
  auto row = [](const char* metric, const char* unit, const char* value) {
    return std::string("\"0\",\"9\",\"w\",\"127.0.0.1\",\"k\",\"1\",\"7\",\"(256, 1, 1)\",\"(132, 1, 1)\",\"0\",\"9.0\",") +
           "\"Command line profiler metrics\",\"" + metric + "\",\"" + unit + "\",\"" + value + "\"\n";
  };
  auto p = parse_csv(head + row("gpu__time_duration.sum", "ns", "3,584") + row("dram__bytes_read.sum", "B", "8,000,000") +
                     row("dram__bytes_write.sum", "MB", "2"));
  ASSERT_TRUE(p.has_value()) << p.error().message;
  EXPECT_DOUBLE_EQ(p->metrics.at("duration_us"), 3.584);
  EXPECT_NEAR(p->metrics.at("dram_gbs"), 10e6 / 3.584e-6 / 1e9, 1e-6);
  auto q = parse_csv(head + row("gpu__time_duration.sum", "cycle", "7000") + row("launch__registers_per_thread",
                                                                                   "register/thread", "40"));
  ASSERT_TRUE(q.has_value()) << q.error().message;
  EXPECT_EQ(q->metrics.count("duration_us"), 0u);
  EXPECT_DOUBLE_EQ(q->metrics.at("registers"), 40);
}

TEST(NcuCsv, NcuErrorsAreTheError) {
  auto p = parse_csv(
      "==PROF== Connected to process 17 (/w)\n"
      "==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU Performance Counters on "
      "the target device 0.\n"
      "==PROF== Disconnected from process 17\n");
  ASSERT_FALSE(p.has_value());
  EXPECT_NE(p.error().message.find("ERR_NVGPUCTRPERM"), std::string::npos) << p.error().message;
}

TEST(NcuCsv, NoKernelIsAnError) {
  auto p = parse_csv("==PROF== Connected to process 17 (/w)\n==WARNING== No kernels were profiled.\n");
  ASSERT_FALSE(p.has_value());
  EXPECT_NE(p.error().message.find("no kernel"), std::string::npos) << p.error().message;
}

TEST(NcuMetricList, NamesAreTheFirstWordOfMetricRows) {
  const std::string listing =
      "Device NVIDIA H200 (GH100)\n"
      "------------------------------------------------------------------\n"
      "Metric Name                          Metric Description\n"
      "dram__bytes_read                     # of bytes read from DRAM\n"
      "gpu__time_duration                   total duration in nanoseconds\n"
      "sm__warps_active                     cumulative # of warps in flight\n";
  EXPECT_EQ(parse_metric_list(listing),
            (std::vector<std::string>{"dram__bytes_read", "gpu__time_duration", "sm__warps_active"}));
}

TEST(NcuLauncher, StartsTheProgramWithTheMetricsAndUnlockedClocks) {
  const auto argv = launcher("/opt/ncu", {"gpu__time_duration.sum", "dram__bytes_read.sum"}, "/tmp/x/ncu.csv", 16);
  ASSERT_FALSE(argv.empty());
  EXPECT_EQ(argv.front(), "/opt/ncu");
  EXPECT_EQ(argv.back(), "--") << "the worker's argv follows";
  auto after = [&](const std::string& flag) {
    for (size_t i = 0; i + 1 < argv.size(); ++i)
      if (argv[i] == flag) return argv[i + 1];
    return std::string("(missing)");
  };
  EXPECT_EQ(after("--clock-control"), "none");
  EXPECT_EQ(after("--metrics"), "gpu__time_duration.sum,dram__bytes_read.sum");
  EXPECT_EQ(after("--log-file"), "/tmp/x/ncu.csv");
  EXPECT_EQ(after("--launch-count"), "16");
  EXPECT_NE(std::find(argv.begin(), argv.end(), "--csv"), argv.end());
}

TEST(NcuWanted, EveryWantedMetricHasAShortName) {
  // parse_csv drops rows of metrics it has no name for: a wanted metric
  // without one would be measured and thrown away.
  std::string csv = "\"ID\",\"Metric Name\",\"Metric Unit\",\"Metric Value\"\n";
  for (const auto& m : wanted_metrics()) csv += "\"0\",\"" + m + "\",\"\",\"1\"\n";
  auto p = parse_csv(csv);
  ASSERT_TRUE(p.has_value()) << p.error().message;
  // Every short name of the header's list, raw byte counts folded away.
  for (const char* k : {"duration_us", "dram_pct", "dram_gbs", "l2_hit_pct", "l1_hit_pct", "sm_pct", "occupancy_pct",
                        "tensor_pct", "fma_pct", "registers", "stall_long_scoreboard", "stall_short_scoreboard",
                        "stall_barrier", "stall_mio_throttle", "stall_lg_throttle", "stall_math_pipe", "stall_wait",
                        "stall_not_selected", "kernels"})
    EXPECT_EQ(p->metrics.count(k), 1u) << k;
}

}  // namespace
}  // namespace kevolve::eval::ncu
