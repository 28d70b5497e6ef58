// The detour count a packet carries (one byte in the shim, saturating) and
// the max_detours rule (0: no cap, TTL alone bounds loops).
#include "lib/mechanisms/dibs/detour_count.h"

#include <gtest/gtest.h>

namespace sluice {
namespace {

TEST(DibsCount, CountsUpAndSaturatesAt255) {
  EXPECT_EQ(next_detour_count(0), 1);
  EXPECT_EQ(next_detour_count(41), 42);
  EXPECT_EQ(next_detour_count(254), 255);
  EXPECT_EQ(next_detour_count(255), 255);
  uint8_t c = 0;
  for (int i = 0; i < 1000; ++i) c = next_detour_count(c);
  EXPECT_EQ(c, kMaxDetourCount);
}

TEST(DibsCount, MaxDetoursZeroIsNoCap) {
  for (unsigned d = 0; d <= 255; ++d) EXPECT_TRUE(may_detour(uint8_t(d), 0)) << d;
}

TEST(DibsCount, APacketThatReachedMaxDetoursIsNotDetoured) {
  for (unsigned d = 0; d < 3; ++d) EXPECT_TRUE(may_detour(uint8_t(d), 3)) << d;
  for (unsigned d = 3; d <= 255; ++d) EXPECT_FALSE(may_detour(uint8_t(d), 3)) << d;
  EXPECT_TRUE(may_detour(0, 1));
  EXPECT_FALSE(may_detour(1, 1));
  // The largest cap the byte can enforce: 254 detours, not the 255th.
  EXPECT_TRUE(may_detour(254, 255));
  EXPECT_FALSE(may_detour(255, 255));
}

// A packet detoured again and again under a cap takes exactly max_detours.
TEST(DibsCount, ACappedPacketTakesExactlyMaxDetours) {
  for (uint32_t cap : {1u, 2u, 7u, 255u}) {
    uint8_t c = 0;
    uint32_t taken = 0;
    while (may_detour(c, cap) && taken < 1000) {
      c = next_detour_count(c);
      ++taken;
    }
    EXPECT_EQ(taken, cap);
    EXPECT_EQ(c, cap);
  }
}

}  // namespace
}  // namespace sluice
