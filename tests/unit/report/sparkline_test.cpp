#include <gtest/gtest.h>

#include <cmath>

#include "report/sparkline.h"

using kevolve::report::sparkline;

TEST(Sparkline, RisingBestFitnessClimbsToAFullBlock) {
  EXPECT_EQ(sparkline({1, 2, 3, 4, 5, 6, 7, 8}, 20), "▁▂▃▄▅▆▇█");
}

TEST(Sparkline, NothingCorrectYetIsBlank) {
  EXPECT_EQ(sparkline({0, 0, 1.5, 3.0}, 10), "  ▁█");
  EXPECT_EQ(sparkline({0, 0, 0}, 10), "   ");
  EXPECT_EQ(sparkline({NAN, -1.0, 2.0, 4.0}, 10), "  ▁█");
}

TEST(Sparkline, ManyValuesFitTheWidthAndKeepTheBucketMaximum) {
  std::vector<double> best;
  for (int i = 1; i <= 1000; ++i) best.push_back(i <= 500 ? 1.0 : 2.0);
  const std::string s = sparkline(best, 10);
  EXPECT_EQ(s, "▁▁▁▁▁█████");  // each block is 3 bytes of UTF-8
  std::vector<double> spike(100, 1.0);
  spike[37] = 4.0;  // a single high value is not averaged away
  EXPECT_EQ(sparkline(spike, 5), "▁█▁▁▁");
}

TEST(Sparkline, SmallGainsAreVisible) {
  EXPECT_EQ(sparkline({1.77, 1.77, 1.77, 2.16}, 10), "▁▁▁█");
  EXPECT_EQ(sparkline({1.0, 1.5, 2.0}, 10), "▁▅█");  // 1.5 is half way: level 3.5 rounds to 4
}

TEST(Sparkline, EqualValuesAreFlatAndEmptyInputIsEmpty) {
  EXPECT_EQ(sparkline({1.2, 1.2}, 4), "▁▁");
  EXPECT_EQ(sparkline({}, 4), "");
  EXPECT_EQ(sparkline({1.0}, 0), "");
}
