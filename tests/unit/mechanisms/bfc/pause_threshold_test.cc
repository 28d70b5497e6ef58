#include "lib/mechanisms/bfc/pause_threshold.h"

#include <gtest/gtest.h>

#include <array>

namespace sluice {
namespace {

TEST(BfcPauseThreshold, OneHopBdpSharedByActiveQueues) {
  // 10 us x 100 Gb/s = 1,000,000 bits = 125,000 bytes.
  EXPECT_EQ(pause_threshold_bytes(10'000, 100'000'000'000ull, 1), 125'000u);
  EXPECT_EQ(pause_threshold_bytes(10'000, 100'000'000'000ull, 2), 62'500u);
  EXPECT_EQ(pause_threshold_bytes(10'000, 100'000'000'000ull, 5), 25'000u);
  // N_active 0 counts as 1.
  EXPECT_EQ(pause_threshold_bytes(10'000, 100'000'000'000ull, 0), 125'000u);
  // 2 us x 10 Gb/s = 2500 bytes; / 3 = 833 (floor).
  EXPECT_EQ(pause_threshold_bytes(2'000, 10'000'000'000ull, 3), 833u);
  // No overflow: 1 s x 400 Gb/s = 5e10 bytes.
  EXPECT_EQ(pause_threshold_bytes(1'000'000'000, 400'000'000'000ull, 1), 50'000'000'000ull);
  // A hop RTT near UINT64_MAX ns at 400 Gb/s is 50 x 2^64 bytes: saturates, not truncates.
  EXPECT_EQ(pause_threshold_bytes(UINT64_MAX, 400'000'000'000ull, 1), UINT64_MAX);
  EXPECT_EQ(pause_threshold_bytes(UINT64_MAX, 8'000'000'000ull, 1), UINT64_MAX);
}

TEST(BfcPauseThreshold, ActiveQueuesAreNonEmptyAndNotPaused) {
  EXPECT_EQ(active_queue_count(0, 0), 0u);
  EXPECT_EQ(active_queue_count(0b1011, 0), 3u);
  EXPECT_EQ(active_queue_count(0b1011, 0b0010), 2u);
  EXPECT_EQ(active_queue_count(0b1011, 0b0100), 3u);  // paused but empty: not active anyway
  EXPECT_EQ(active_queue_count(~uint64_t{0}, 0), 64u);
}

TEST(BfcPauseThreshold, ThFollowsNActiveAsQueuesFillPauseAndDrain) {
  const uint64_t rtt = 8'000, rate = 25'000'000'000ull;  // BDP = 25,000 bytes
  uint64_t nonempty = 0, paused = 0;
  auto th = [&] { return pause_threshold_bytes(rtt, rate, active_queue_count(nonempty, paused)); };
  EXPECT_EQ(th(), 25'000u);
  nonempty = 0b1;
  EXPECT_EQ(th(), 25'000u);
  nonempty = 0b111;
  EXPECT_EQ(th(), 8'333u);
  nonempty = 0b1111;
  EXPECT_EQ(th(), 6'250u);
  paused = 0b0011;  // two of them paused by downstream
  EXPECT_EQ(th(), 12'500u);
  nonempty = 0b0011;  // the active ones drain
  EXPECT_EQ(th(), 25'000u);
}

}  // namespace
}  // namespace sluice
