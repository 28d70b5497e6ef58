// Default max_T_on for PFC / PAUSE and for BFC, against numbers worked by
// hand.
#include "lib/mechanisms/tcd/max_t_on.h"

#include <gtest/gtest.h>

#include <cstdint>

namespace sluice {
namespace {

TEST(TcdMaxTon, ByteTimeRoundsUp) {
  EXPECT_EQ(tcd_byte_time_ns(1'250, 10'000'000'000), 1'000u);  // 10 kbit at 10 Gb/s
  EXPECT_EQ(tcd_byte_time_ns(1, 10'000'000'000), 1u);          // 0.8 ns
  EXPECT_EQ(tcd_byte_time_ns(3'028, 10'000'000'000), 2'423u);  // 2422.4 ns
  EXPECT_EQ(tcd_byte_time_ns(12'345, 0), 0u);
  EXPECT_EQ(tcd_byte_time_ns(UINT64_MAX, 1), UINT64_MAX);
}

TEST(TcdMaxTon, PfcIsTwiceTheHysteresisAndTheRoundTripAtLineRate) {
  // XOFF - XON = 2 x (1500 + 14) = 3028 B, C = 10 Gb/s, d = 5 us:
  // 2 x (3028 B + 2 x 10 Gb/s x 5 us = 12500 B) / 10 Gb/s
  //   = 2 x 15528 x 8 / 10 ns = 24844.8 ns; byte term rounded up: 24846.
  EXPECT_EQ(tcd_pfc_max_t_on_ns(3'028, 10'000'000'000, 5'000), 2 * 2'423u + 20'000u);
  // 100 Gb/s, 200 KB between XOFF and XON, 1 us: 2 x 16 us + 4 us.
  EXPECT_EQ(tcd_pfc_max_t_on_ns(200'000, 100'000'000'000, 1'000), 36'000u);
  // An unshaped port (rate 0): the byte term vanishes.
  EXPECT_EQ(tcd_pfc_max_t_on_ns(200'000, 0, 1'000), 4'000u);
  EXPECT_EQ(tcd_pfc_max_t_on_ns(1, 1, UINT64_MAX / 2), UINT64_MAX);
}

TEST(TcdMaxTon, BfcIsTwiceThAndTheHopRttAtLineRate) {
  // Th = 10 us x 10 Gb/s = 12500 B, hop RTT 10 us:
  // 2 x (12500 B + 10 Gb/s x 10 us) / 10 Gb/s = 2 x 20 us = 40 us.
  EXPECT_EQ(tcd_bfc_max_t_on_ns(12'500, 10'000'000'000, 10'000), 40'000u);
  // Th 3000 B at 25 Gb/s (960 ns), hop RTT 4 us: 1920 + 8000.
  EXPECT_EQ(tcd_bfc_max_t_on_ns(3'000, 25'000'000'000, 4'000), 9'920u);
  EXPECT_EQ(tcd_bfc_max_t_on_ns(UINT64_MAX, 1, 1), UINT64_MAX);
}

}  // namespace
}  // namespace sluice
