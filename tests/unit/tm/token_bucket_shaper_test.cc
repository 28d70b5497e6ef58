#include "lib/tm/token_bucket_shaper.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <stdexcept>

namespace sluice {
namespace {

constexpr uint32_t kOverhead = 24;

struct XorShift {
  uint64_t s;
  uint64_t next() {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    return s;
  }
};

// Drives a backlogged shaper for `duration_ns`, polling every 1-50 us at
// irregular intervals and sending everything it allows; returns wire bytes.
uint64_t run_backlogged(TokenBucketShaper& s, uint64_t duration_ns, uint32_t min_frame,
                        uint32_t max_frame, uint64_t seed) {
  XorShift rng{seed};
  uint64_t now = 0;
  uint64_t wire_bytes = 0;
  for (;;) {
    while (s.ready(now)) {
      uint32_t frame = min_frame + static_cast<uint32_t>(rng.next() % (max_frame - min_frame + 1));
      s.consume(now, frame);
      wire_bytes += frame + kOverhead;
    }
    if (now == duration_ns) break;
    now = std::min(duration_ns, now + 1000 + rng.next() % 49001);
  }
  return wire_bytes;
}

struct RateCase {
  uint64_t rate_bps;
  uint32_t min_frame;
  uint32_t max_frame;
};

class ShaperRateTest : public ::testing::TestWithParam<RateCase> {};

TEST_P(ShaperRateTest, LongRunRateIsExact) {
  const RateCase c = GetParam();
  const uint64_t kSecond = 1'000'000'000;
  // A burst worth 60 us, longer than the largest poll gap, so no credit is
  // lost to the cap while backlogged.
  const uint64_t burst = c.rate_bps * 60 / 8'000'000;
  TokenBucketShaper s(c.rate_bps, burst, kOverhead);
  uint64_t sent = run_backlogged(s, kSecond, c.min_frame, c.max_frame, c.rate_bps ^ 0x5eed);

  // Independent expectation: the bucket starts full (burst), then one second
  // of rate arrives; the last frame may overdraw by at most one wire frame.
  const double earned = static_cast<double>(burst) + static_cast<double>(c.rate_bps) / 8.0;
  EXPECT_GE(static_cast<double>(sent), earned * (1 - 1e-7));
  EXPECT_LE(static_cast<double>(sent), earned * (1 + 1e-7) + c.max_frame + kOverhead);
  // And the headline requirement: within 1e-4 of rate x time.
  const double bits = static_cast<double>(sent) * 8.0;
  EXPECT_NEAR(bits / static_cast<double>(c.rate_bps), 1.0, 1e-4);
}

INSTANTIATE_TEST_SUITE_P(
    Rates, ShaperRateTest,
    ::testing::Values(RateCase{10'000'000'000, 64, 64}, RateCase{10'000'000'000, 64, 1518},
                      RateCase{100'000'000'000, 64, 1518}, RateCase{25'000'000'000, 64, 64},
                      RateCase{1'000'000'000, 1500, 1500}, RateCase{7'000'000'000, 64, 9000},
                      RateCase{3'333'333'333, 100, 1400}));

TEST(TokenBucketShaper, BurstCapAfterIdle) {
  // 10 Gb/s is exactly 0.8 ns per byte; 1000-byte frames cost 1024 wire bytes.
  TokenBucketShaper s(10'000'000'000, 16384, kOverhead);
  auto drain_at = [&](uint64_t now) {
    int n = 0;
    while (s.ready(now)) {
      s.consume(now, 1000);
      ++n;
    }
    return n;
  };
  // 16384 / 1024 = 16 frames take tokens to exactly 0, and a 17th may still go.
  EXPECT_EQ(drain_at(0), 17);
  // Tokens are now -1024 bytes = 819.2 ns of transmission.
  EXPECT_EQ(s.next_ready_ns(), 820u);
  EXPECT_FALSE(s.ready(819));
  EXPECT_TRUE(s.ready(820));
  // After a long idle the bucket holds no more than the burst.
  EXPECT_EQ(drain_at(5'000'000'000), 17);
  EXPECT_EQ(drain_at(10'000'000'000), 17);
}

TEST(TokenBucketShaper, DeficitIsRepaid) {
  // 1 Gb/s: 8 ns per byte. Burst of 1 byte: strictly one frame at a time.
  TokenBucketShaper s(1'000'000'000, 1, 0);
  EXPECT_TRUE(s.ready(0));
  s.consume(0, 1000);  // tokens 1 - 1000 bytes => ready after 999 bytes = 7992 ns
  EXPECT_FALSE(s.ready(7991));
  EXPECT_TRUE(s.ready(7992));
}

TEST(TokenBucketShaper, UnlimitedAlwaysReady) {
  TokenBucketShaper s(0, 0, kOverhead);
  EXPECT_TRUE(s.unlimited());
  for (int i = 0; i < 1000; ++i) {
    ASSERT_TRUE(s.ready(0));
    s.consume(0, 1500);
  }
}

TEST(TokenBucketShaper, RejectsTinyRates) {
  EXPECT_THROW(TokenBucketShaper(999'999, 1000, 0), std::invalid_argument);
}

}  // namespace
}  // namespace sluice

namespace sluice {
namespace {

// 1 Gb/s: 8 ns per byte; a 1000-byte bucket.
TEST(TokenBucketShaper, WireBudgetIsWhatHasTokensAllows) {
  TokenBucketShaper s(1'000'000'000, 1000, 24);
  s.advance(0);
  EXPECT_EQ(s.wire_budget(), 1000);
  s.spend_wire(999);
  EXPECT_EQ(s.wire_budget(), 1);
  EXPECT_TRUE(s.has_tokens());
  s.spend_wire(1);
  EXPECT_EQ(s.wire_budget(), 0);  // exactly 0 tokens: a frame may still leave
  EXPECT_TRUE(s.has_tokens());
  s.spend_wire(1);
  EXPECT_EQ(s.wire_budget(), -1);
  EXPECT_FALSE(s.has_tokens());
  EXPECT_EQ(s.next_ready_ns(), 8u);
  EXPECT_EQ(TokenBucketShaper::wire_bytes(100, 24), 124u);
  EXPECT_EQ(TokenBucketShaper::wire_bytes(5u << 20, 24), (1u << 20) + 24);
}

}  // namespace
}  // namespace sluice
