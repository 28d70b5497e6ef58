// Floodgate's aggregated credits: per ingress, one entry per destination,
// sent at the byte threshold or after the interval; delayCredit withholds
// without losing.
#include "lib/mechanisms/floodgate/credit_aggregator.h"

#include <gtest/gtest.h>

#include <vector>

namespace sluice {
namespace {

auto never = [](uint32_t) { return false; };

std::vector<CreditEntry> take(CreditAggregator& a, uint32_t i, uint64_t now) {
  CreditEntry out[CreditAggregator::kMaxPending];
  const uint32_t n = a.take(i, now, out, CreditAggregator::kMaxPending, never);
  return std::vector<CreditEntry>(out, out + n);
}

TEST(FgCredit, OneEntryPerDestinationPerIngress) {
  CreditAggregator a(2, 10240, 10'000);
  ASSERT_TRUE(a.add(0, 1, 1500));
  ASSERT_TRUE(a.add(0, 2, 1000));
  ASSERT_TRUE(a.add(0, 1, 1500));
  ASSERT_TRUE(a.add(1, 1, 64));
  const auto e = take(a, 0, 0);
  ASSERT_EQ(e.size(), 2u);
  EXPECT_EQ(e[0].dst_ip, 1u);
  EXPECT_EQ(e[0].credit_bytes, 3000u);
  EXPECT_EQ(e[1].dst_ip, 2u);
  EXPECT_EQ(e[1].credit_bytes, 1000u);
  EXPECT_EQ(a.pending_bytes(0), 0u);
  EXPECT_EQ(a.pending_bytes(1), 64u);
}

TEST(FgCredit, DueAtTheThresholdOrAfterTheInterval) {
  CreditAggregator a(1, 10240, 10'000);
  EXPECT_FALSE(a.due(0, 1'000'000));  // nothing pending
  take(a, 0, 1'000'000);              // a frame just went
  a.add(0, 1, 10239);
  EXPECT_FALSE(a.due(0, 1'000'000));
  EXPECT_FALSE(a.due(0, 1'009'999));
  EXPECT_TRUE(a.due(0, 1'010'000));  // T since the last frame
  a.add(0, 1, 1);
  EXPECT_TRUE(a.due(0, 1'000'001));  // 10 KiB
  EXPECT_EQ(take(a, 0, 1'000'001)[0].credit_bytes, 10240u);
  EXPECT_FALSE(a.due(0, 1'010'000));
}

// Exact fabric time asks when an ingress is next due instead of polling:
// the first instant due() turns true.
TEST(FgCredit, NextDueIsTheFirstInstantDueTurnsTrue) {
  CreditAggregator a(1, 10240, 10'000);
  EXPECT_EQ(a.next_due_ns(0), UINT64_MAX);  // nothing pending
  take(a, 0, 1'000'000);
  a.add(0, 1, 100);
  EXPECT_EQ(a.next_due_ns(0), 1'010'000u);
  EXPECT_FALSE(a.due(0, a.next_due_ns(0) - 1));
  EXPECT_TRUE(a.due(0, a.next_due_ns(0)));
  a.add(0, 1, 10'140);  // the threshold: due at once (since the last frame)
  EXPECT_EQ(a.next_due_ns(0), 1'000'000u);
  EXPECT_TRUE(a.due(0, a.next_due_ns(0)));
}

// A frame that could not be sent puts its credit back; retry_at keeps the
// ingress from being due again at the same instant (exact time would never
// leave it).
TEST(FgCredit, ARetryWaitsForItsInstant) {
  CreditAggregator a(1, 10240, 10'000);
  a.add(0, 1, 20'000);
  ASSERT_TRUE(a.due(0, 5'000));
  const auto e = take(a, 0, 5'000);
  ASSERT_EQ(e.size(), 1u);
  a.add(0, 1, e[0].credit_bytes);  // not sent: back
  EXPECT_EQ(a.next_due_ns(0), 5'000u);
  a.retry_at(0, 6'000);
  EXPECT_EQ(a.next_due_ns(0), 6'000u);
  EXPECT_FALSE(a.due(0, 5'999));
  EXPECT_TRUE(a.due(0, 6'000));
  EXPECT_EQ(take(a, 0, 6'000)[0].credit_bytes, 20'000u);  // nothing lost
  EXPECT_EQ(a.next_due_ns(0), UINT64_MAX);
}

TEST(FgCredit, DelayCreditWithholdsWithoutLosingAndWaitsForTheInterval) {
  CreditAggregator a(1, 1000, 10'000);
  a.add(0, 1, 2000);
  a.add(0, 2, 500);
  bool hold_1 = true;
  auto withhold = [&](uint32_t dst) { return dst == 1 && hold_1; };
  CreditEntry out[8];
  ASSERT_EQ(a.take(0, 0, out, 8, withhold), 1u);
  EXPECT_EQ(out[0].dst_ip, 2u);
  EXPECT_EQ(a.withheld_bytes.get(), 2000u);
  EXPECT_EQ(a.pending_bytes(0), 2000u);
  // Withheld credit alone does not make the ingress due before T...
  EXPECT_FALSE(a.due(0, 5'000));
  EXPECT_TRUE(a.due(0, 10'000));
  ASSERT_EQ(a.take(0, 10'000, out, 8, withhold), 0u);
  // ...and goes once the VOQ fell back.
  hold_1 = false;
  ASSERT_EQ(a.take(0, 20'000, out, 8, withhold), 1u);
  EXPECT_EQ(out[0].credit_bytes, 2000u);
  EXPECT_EQ(a.pending_bytes(0), 0u);
}

TEST(FgCredit, AFullIngressRefusesANewDestinationUntilItsFrameGoes) {
  CreditAggregator a(1, UINT64_MAX, UINT64_MAX / 2);
  for (uint32_t d = 0; d < CreditAggregator::kMaxPending; ++d) ASSERT_TRUE(a.add(0, d, 1));
  EXPECT_TRUE(a.add(0, 5, 1));  // a known destination still adds
  EXPECT_FALSE(a.add(0, 9999, 1));
  EXPECT_EQ(a.pending_bytes(0), CreditAggregator::kMaxPending + 1u);
  // A frame takes at most `max` entries; the rest stay.
  CreditEntry out[100];
  EXPECT_EQ(a.take(0, 0, out, 100, never), 100u);
  EXPECT_TRUE(a.add(0, 9999, 1));
  EXPECT_EQ(take(a, 0, 0).size(), CreditAggregator::kMaxPending - 100 + 1);
  EXPECT_EQ(a.pending_bytes(0), 0u);
}

}  // namespace
}  // namespace sluice

namespace sluice {
namespace {

// An entry is 32 bits on the wire: credit withheld long enough to fill one
// continues in a second entry for the same destination, nothing wraps.
TEST(FgCredit, AFullEntryContinuesInASecondOne) {
  CreditAggregator a(1, uint64_t{1} << 40, 1'000'000'000);
  const uint32_t chunk = 1'000'000'000;
  for (int k = 0; k < 5; ++k) ASSERT_TRUE(a.add(0, 7, chunk));
  EXPECT_EQ(a.pending_bytes(0), 5 * uint64_t{chunk});
  const auto e = take(a, 0, 2'000'000'000);
  ASSERT_EQ(e.size(), 2u);
  EXPECT_EQ(e[0].dst_ip, 7u);
  EXPECT_EQ(e[1].dst_ip, 7u);
  EXPECT_EQ(e[0].credit_bytes, 4 * uint64_t{chunk});
  EXPECT_EQ(e[1].credit_bytes, chunk);
}

}  // namespace
}  // namespace sluice

namespace sluice {
namespace {

// Many destinations interleaved, some withheld across takes, over more takes
// than the index has generations: every destination keeps exactly one entry
// holding all its credit, and nothing is lost or counted twice.
TEST(FgCredit, ManyDestinationsAcrossManyTakesKeepOneEntryEach) {
  CreditAggregator a(1, 1u << 30, 10'000);
  constexpr uint32_t kDsts = 200;
  std::vector<uint64_t> owed(kDsts, 0), paid(kDsts, 0);
  CreditEntry out[CreditAggregator::kMaxPending];
  for (uint32_t round = 0; round < 70'000; ++round) {
    for (uint32_t k = 0; k < 3; ++k) {
      const uint32_t d = (round * 7 + k * 31) % kDsts;
      ASSERT_TRUE(a.add(0, 1000 + d, 100 + d));
      owed[d] += 100 + d;
    }
    // A take every round: more takes than the index's 16-bit generation.
    // Destinations whose number is a multiple of 3 are held back every other.
    const bool hold_odd = round % 2 == 0;
    const uint32_t n = a.take(0, round, out, CreditAggregator::kMaxPending,
                              [&](uint32_t dst) { return hold_odd && (dst - 1000) % 3 == 0; });
    std::vector<bool> seen(kDsts, false);
    for (uint32_t e = 0; e < n; ++e) {
      const uint32_t d = out[e].dst_ip - 1000;
      ASSERT_LT(d, kDsts);
      ASSERT_FALSE(seen[d]) << "destination " << d << " listed twice in one frame";
      seen[d] = true;
      paid[d] += out[e].credit_bytes;
    }
  }
  const uint32_t n = a.take(0, 1'000'000, out, CreditAggregator::kMaxPending, never);
  for (uint32_t e = 0; e < n; ++e) paid[out[e].dst_ip - 1000] += out[e].credit_bytes;
  EXPECT_EQ(paid, owed);
  EXPECT_EQ(a.pending_bytes(0), 0u);
}

}  // namespace
}  // namespace sluice
