// DIBS's exported counters: detours per port, detour drops by reason, and
// the histogram of detours per packet with its bounded buckets.
#include "lib/mechanisms/dibs/dibs_counters.h"

#include <gtest/gtest.h>

#include "lib/mechanisms/dibs/detour_count.h"

namespace sluice {
namespace {

TEST(DibsCounters, BucketsAreTheDocumentedRanges) {
  EXPECT_EQ(detour_bucket(0), 0u);
  EXPECT_EQ(detour_bucket(1), 1u);
  EXPECT_EQ(detour_bucket(2), 2u);
  EXPECT_EQ(detour_bucket(3), 3u);
  EXPECT_EQ(detour_bucket(4), 4u);
  EXPECT_EQ(detour_bucket(7), 4u);
  EXPECT_EQ(detour_bucket(8), 5u);
  EXPECT_EQ(detour_bucket(15), 5u);
  EXPECT_EQ(detour_bucket(16), 6u);
  EXPECT_EQ(detour_bucket(31), 6u);
  EXPECT_EQ(detour_bucket(32), 7u);
  EXPECT_EQ(detour_bucket(63), 7u);
  EXPECT_EQ(detour_bucket(64), 8u);
  EXPECT_EQ(detour_bucket(255), 8u);
}

// Every count falls in the bucket whose upper bound is the first at or
// above it, and the last bucket ends at the byte's saturation.
TEST(DibsCounters, EveryCountHasExactlyTheBucketOfItsUpperBound) {
  EXPECT_EQ(kDetourBucketUpper[kDetourBuckets - 1], kMaxDetourCount);
  for (unsigned d = 0; d <= 255; ++d) {
    const unsigned b = detour_bucket(uint8_t(d));
    ASSERT_LT(b, kDetourBuckets);
    EXPECT_LE(d, kDetourBucketUpper[b]) << d;
    if (b > 0) {
      EXPECT_GT(d, kDetourBucketUpper[b - 1]) << d;
    }
  }
}

TEST(DibsCounters, CountDetoursPerPortDropsPerReasonAndExits) {
  DibsCounters c(4);
  EXPECT_EQ(c.port_count(), 4u);
  c.count_detour(1);
  c.count_detour(1);
  c.count_detour(3);
  c.count_drop(DetourDrop::kNoPort);
  c.count_drop(DetourDrop::kMaxDetours);
  c.count_drop(DetourDrop::kMaxDetours);
  c.count_drop(DetourDrop::kRefused);
  for (uint8_t d : {0, 0, 0, 1, 5, 6, 200}) c.count_exit(d);
  EXPECT_EQ(c.detours(0), 0u);
  EXPECT_EQ(c.detours(1), 2u);
  EXPECT_EQ(c.detours(2), 0u);
  EXPECT_EQ(c.detours(3), 1u);
  EXPECT_EQ(c.drops(DetourDrop::kNoPort), 1u);
  EXPECT_EQ(c.drops(DetourDrop::kMaxDetours), 2u);
  EXPECT_EQ(c.drops(DetourDrop::kRefused), 1u);
  const uint64_t want[kDetourBuckets] = {3, 1, 0, 0, 2, 0, 0, 0, 1};
  for (unsigned b = 0; b < kDetourBuckets; ++b) EXPECT_EQ(c.bucket(b), want[b]) << b;
  EXPECT_EQ(c.exit_detours(), 0u + 1 + 5 + 6 + 200);
}

TEST(DibsCounters, DropsAreCountedUnderTheirOwnPortDropReasons) {
  EXPECT_EQ(drop_reason_name(drop_reason_of(DetourDrop::kNoPort)), "detour_no_port");
  EXPECT_EQ(drop_reason_name(drop_reason_of(DetourDrop::kMaxDetours)), "detour_max_detours");
  EXPECT_EQ(drop_reason_name(drop_reason_of(DetourDrop::kRefused)), "detour_refused");
}

}  // namespace
}  // namespace sluice
