#include "lib/mechanisms/bfc/hop_rtt.h"

#include <gtest/gtest.h>

#include <array>

namespace sluice {
namespace {

TEST(BfcHopRtt, LargestOfTheSwitchFacingPortsOnly) {
  // A slow host link (50 us) must not raise Th, sticky and the bitmap period:
  // BFC pauses reach switch upstreams only.
  const std::array<uint64_t, 4> rtts = {50'000, 20'000, 8'000, 90'000};
  const std::array<bool, 4> facing = {false, true, true, false};
  EXPECT_EQ(upstream_hop_rtt_ns(rtts, facing), 20'000u);
  const std::array<bool, 4> one = {false, false, true, false};
  EXPECT_EQ(upstream_hop_rtt_ns(rtts, one), 8'000u);
}

TEST(BfcHopRtt, NoSwitchFacingPortFallsBackToAllPorts) {
  const std::array<uint64_t, 3> rtts = {5'000, 30'000, 7'000};
  const std::array<bool, 3> none = {false, false, false};
  EXPECT_EQ(upstream_hop_rtt_ns(rtts, none), 30'000u);
  EXPECT_EQ(upstream_hop_rtt_ns({}, {}), 0u);
}

TEST(BfcHopRtt, ThTimeDefaultsToHopRttAndIsUsedAsGiven) {
  EXPECT_EQ(bfc_th_time_ns(0, 10'000), 10'000u);
  EXPECT_EQ(bfc_th_time_ns(2'000, 10'000), 2'000u);
  EXPECT_EQ(bfc_th_time_ns(UINT64_MAX, 10'000), UINT64_MAX);
}

TEST(BfcHopRtt, StickyAndBitmapDefaultToMultiplesOfHopRtt) {
  EXPECT_EQ(bfc_sticky_ns(0, 10'000), 20'000u);
  EXPECT_EQ(bfc_bitmap_interval_ns(0, 10'000), 100'000u);
  EXPECT_EQ(bfc_sticky_ns(7, 10'000), 7u);  // configured: as given
  EXPECT_EQ(bfc_bitmap_interval_ns(UINT64_MAX, 10'000), UINT64_MAX);
}

TEST(BfcHopRtt, DefaultsSaturateForHugeHopRtt) {
  // 2 x (2^63 + 1) and 10 x (2^61) wrap to 2 and 2^62 in plain uint64.
  EXPECT_EQ(bfc_sticky_ns(0, (uint64_t{1} << 63) + 1), UINT64_MAX);
  EXPECT_EQ(bfc_bitmap_interval_ns(0, uint64_t{1} << 61), UINT64_MAX);
  EXPECT_EQ(bfc_sticky_ns(0, UINT64_MAX / 2), UINT64_MAX - 1);  // still fits
  EXPECT_EQ(sat_add(UINT64_MAX - 1, 1), UINT64_MAX);
  EXPECT_EQ(sat_add(UINT64_MAX - 1, 2), UINT64_MAX);
  EXPECT_EQ(sat_add(3, 4), 7u);
}

}  // namespace
}  // namespace sluice
