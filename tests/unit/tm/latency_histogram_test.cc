#include "lib/tm/latency_histogram.h"

#include <gtest/gtest.h>

namespace sluice {
namespace {

TEST(LatencyHistogram, BucketBoundaries) {
  EXPECT_EQ(LatencyHistogram::bucket_count(), 22u);
  EXPECT_EQ(LatencyHistogram::upper_bound_ns(0), 100u);
  EXPECT_EQ(LatencyHistogram::upper_bound_ns(3), 800u);
  EXPECT_EQ(LatencyHistogram::upper_bound_ns(20), 104'857'600u);
  EXPECT_EQ(LatencyHistogram::upper_bound_ns(21), UINT64_MAX);

  EXPECT_EQ(LatencyHistogram::bucket_of(0), 0u);
  EXPECT_EQ(LatencyHistogram::bucket_of(100), 0u);
  EXPECT_EQ(LatencyHistogram::bucket_of(101), 1u);
  EXPECT_EQ(LatencyHistogram::bucket_of(200), 1u);
  EXPECT_EQ(LatencyHistogram::bucket_of(201), 2u);
  EXPECT_EQ(LatencyHistogram::bucket_of(400), 2u);
  EXPECT_EQ(LatencyHistogram::bucket_of(401), 3u);
  EXPECT_EQ(LatencyHistogram::bucket_of(1'000'000), 14u);  // 819,200 < 1 ms <= 1,638,400
  EXPECT_EQ(LatencyHistogram::bucket_of(104'857'600), 20u);
  EXPECT_EQ(LatencyHistogram::bucket_of(104'857'601), 21u);
  EXPECT_EQ(LatencyHistogram::bucket_of(UINT64_MAX), 21u);
}

TEST(LatencyHistogram, EverySampleLandsInTheFirstBucketThatHoldsIt) {
  // Cross-check the bit trick against the definition for many values.
  for (uint64_t ns = 0; ns < 3'000'000; ns += 37) {
    unsigned b = LatencyHistogram::bucket_of(ns);
    ASSERT_LE(ns, LatencyHistogram::upper_bound_ns(b));
    if (b > 0) {
      ASSERT_GT(ns, LatencyHistogram::upper_bound_ns(b - 1));
    }
  }
}

TEST(LatencyHistogram, RecordsCountsSumAndTotal) {
  LatencyHistogram h;
  h.record(50);
  h.record(150);
  h.record(150);
  h.record(1'000'000'000);
  EXPECT_EQ(h.count(0), 1u);
  EXPECT_EQ(h.count(1), 2u);
  EXPECT_EQ(h.count(21), 1u);
  EXPECT_EQ(h.cumulative_count(1), 3u);
  EXPECT_EQ(h.cumulative_count(21), 4u);
  EXPECT_EQ(h.total(), 4u);
  EXPECT_EQ(h.sum_ns(), 1'000'000'350u);
}

}  // namespace
}  // namespace sluice
