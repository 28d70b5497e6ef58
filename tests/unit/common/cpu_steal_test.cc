#include "lib/common/cpu_steal.h"

#include <gtest/gtest.h>

namespace sluice {
namespace {

const char* kStat =
    "cpu  53933 0 9945 35377 1055 0 330 7787 0 0\n"
    "cpu0 25263 0 4898 19897 344 0 30 3773 0 0\n"
    "cpu1 28670 0 5046 15479 710 0 300 4014 0 0\n"
    "cpu12 1 2 3 4 5 6 7 99 0 0\n"
    "intr 12345 0 0\n";

TEST(CpuSteal, ReadsTheEighthFigureOfThatCpusLine) {
  EXPECT_EQ(parse_cpu_steal_ticks(kStat, 0), 3773u);
  EXPECT_EQ(parse_cpu_steal_ticks(kStat, 1), 4014u);
  EXPECT_EQ(parse_cpu_steal_ticks(kStat, 12), 99u);  // not cpu1's line
}

TEST(CpuSteal, MissingOrShortLinesGiveNothing) {
  EXPECT_FALSE(parse_cpu_steal_ticks(kStat, 2).has_value());
  EXPECT_FALSE(parse_cpu_steal_ticks("cpu3 1 2 3 4 5 6 7\n", 3).has_value());
  EXPECT_FALSE(parse_cpu_steal_ticks("", 0).has_value());
}

TEST(CpuSteal, TheLiveFileHasCpu0) { EXPECT_TRUE(cpu_steal_ns(0).has_value()); }

}  // namespace
}  // namespace sluice
