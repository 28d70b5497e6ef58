#include "lib/emulator/link/link_timing.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

namespace sluice {
namespace {

// The link's ns from ps without a 128-bit division: the same quotient as the
// division, at the edges of each 32-bit half and on random values up to the
// largest ps a 64-bit ns time can reach.
TEST(LinkTiming, DivideBy1000MatchesTheDivision) {
  using u128 = unsigned __int128;
  const u128 max_ps = u128{UINT64_MAX} * 1000 + 999;
  std::vector<u128> xs = {0, 1, 999, 1000, 1001, 0xFFFFFFFFu, u128{1} << 32, (u128{1} << 32) * 1000,
                          (u128{1} << 32) * 1000 - 1, (u128{1} << 64) - 1, u128{1} << 64, max_ps,
                          max_ps - 1};
  std::mt19937_64 rng(7);
  for (int i = 0; i < 100000; ++i) {
    const u128 x = (u128{rng()} << 64 | rng()) % (max_ps + 1);
    xs.push_back(x);
    xs.push_back(x >> (rng() % 74));  // small values too
  }
  for (const u128 x : xs) {
    ASSERT_EQ(divide_by_1000(x), static_cast<uint64_t>(x / 1000))
        << static_cast<uint64_t>(x >> 64) << ":" << static_cast<uint64_t>(x);
  }
}

TEST(LinkTiming, LoneFrameArrivesAfterSerialisationAndDelay) {
  // 10 Gbps, 1500 B + 24 B overhead = 12192 bits = 1219.2 ns, plus 2 us.
  LinkTiming t(10'000'000'000ull, 24, 2000);
  EXPECT_EQ(t.depart(1'000'000, 1500), 1'000'000 + 1219 + 2000);
}

TEST(LinkTiming, BurstIsSpreadAtLineRate) {
  // 1 Gbps, 100 B + 0 overhead = 800 ns each; four frames handed over at once.
  LinkTiming t(1'000'000'000ull, 0, 500);
  EXPECT_EQ(t.depart(0, 100), 800 + 500);
  EXPECT_EQ(t.depart(0, 100), 1600 + 500);
  EXPECT_EQ(t.depart(0, 100), 2400 + 500);
  // Handed over later than the wire frees: starts at its own hand-over time.
  EXPECT_EQ(t.depart(10'000, 100), 10'800 + 500);
}

TEST(LinkTiming, LongRunRateIsExact) {
  // 7 Gbps has no whole number of ps per byte: 1142.857... ps.
  LinkTiming t(7'000'000'000ull, 24, 0);
  uint64_t due = 0;
  const int frames = 1'000'000;
  for (int i = 0; i < frames; ++i) due = t.depart(0, 1000);
  const double expected_ns = frames * 1024.0 * 8 / 7.0;  // 1024 wire bytes per frame
  EXPECT_NEAR(static_cast<double>(due), expected_ns, expected_ns * 1e-6);
}

TEST(LinkTiming, UnshapedLinkOnlyDelays) {
  LinkTiming t(0, 24, 750);
  EXPECT_EQ(t.depart(100, 1500), 850u);
  EXPECT_EQ(t.depart(100, 1500), 850u);
}

TEST(LinkTiming, DueTimesNeverDecrease) {
  LinkTiming t(25'000'000'000ull, 24, 1000);
  uint64_t last = 0;
  uint64_t now = 0;
  for (int i = 0; i < 10000; ++i) {
    now += (i * 7919) % 300;  // irregular hand-over times
    const uint64_t due = t.depart(now, 64 + (i * 31) % 1400);
    EXPECT_GE(due, last);
    EXPECT_GE(due, now + 1000);
    last = due;
  }
}

TEST(LinkTiming, BacklogIsTheCommittedSerialisationBeyondNow) {
  // 10 Gbps: (1476 + 24) bytes = 1200 ns on the wire.
  LinkTiming t(10'000'000'000ull, 24, 5000);
  EXPECT_EQ(t.serialisation_ns(1476), 1200u);
  EXPECT_EQ(t.backlog_ns(0), 0u);
  t.depart(1000, 1476);
  t.depart(1000, 1476);
  EXPECT_EQ(t.backlog_ns(1000), 2400u);  // the delay is not backlog
  EXPECT_EQ(t.backlog_ns(2000), 1400u);
  EXPECT_EQ(t.backlog_ns(3400), 0u);
  EXPECT_EQ(t.backlog_ns(9000), 0u);
}

// The wire's finish kept as whole ns and a rest gives the due times of one
// absolute count of 1/1024 ps, moved up to each hand-over time and divided
// by 1000 << 10 in 128 bits: rates from 1 bps (a 65,535-byte frame's
// serialisation beyond 2^64 of those units) through the rates about 2 Mb/s
// where depart() turns to 64-bit arithmetic, to 800 Gb/s; frames handed
// over in bursts, on an idle wire and exactly as it frees.
TEST(LinkTiming, DueTimesMatchAnAbsoluteClock) {
  using u128 = unsigned __int128;
  std::mt19937_64 rng(11);
  const uint64_t rates[] = {1,
                            1000,
                            1'900'000,  // the last rates with 128-bit arithmetic
                            2'000'000,  // and the first without
                            7'000'000,
                            1'000'000'000,
                            7'000'000'000,
                            25'000'000'000,
                            100'000'000'000,
                            800'000'000'000};
  for (const uint64_t rate : rates) {
    const uint32_t overhead = static_cast<uint32_t>(rng() % 257);
    const uint64_t delay = rng() % 5000;
    LinkTiming t(rate, overhead, delay);
    const u128 per_byte = (u128{8'000'000'000'000ull} << 10) / rate;
    u128 wire = 0;  // when the wire frees, in 1/1024 ps
    uint64_t now = rng() % 1000;
    for (int i = 0; i < 20000; ++i) {
      const uint32_t bytes = rate < 10'000'000 ? static_cast<uint32_t>(rng() % 65536)
                                              : static_cast<uint32_t>(60 + rng() % 9000);
      const u128 now_units = u128{now} * 1000 * 1024;
      if (wire < now_units) wire = now_units;
      wire += u128{bytes + overhead} * per_byte;
      const uint64_t expected = static_cast<uint64_t>(wire / (1000 * 1024)) + delay;
      ASSERT_EQ(t.depart(now, bytes), expected) << "rate " << rate << " frame " << i;
      ASSERT_EQ(t.wire_free_ns(), static_cast<uint64_t>(wire / (1000 * 1024)));
      // The next frame: in the same burst, as the wire frees (rounded
      // down), just after, or on an idle wire.
      const uint64_t next = rng() % 4;
      if (next == 1) now = t.wire_free_ns();
      if (next == 2) now = t.wire_free_ns() + 1;
      if (next == 3) now = t.wire_free_ns() + rng() % 100'000;
    }
  }
}

}  // namespace
}  // namespace sluice
