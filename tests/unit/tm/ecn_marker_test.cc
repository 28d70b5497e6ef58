#include "lib/tm/disciplines/ecn_marker.h"

#include <gtest/gtest.h>

#include <stdexcept>

namespace sluice {
namespace {

EcnConfig step(uint64_t k) {
  EcnConfig c;
  c.mode = EcnMode::kStep;
  c.step_k_bytes = k;
  return c;
}

EcnConfig red(uint64_t min, uint64_t max, double pmax) {
  EcnConfig c;
  c.mode = EcnMode::kRed;
  c.red_min_bytes = min;
  c.red_max_bytes = max;
  c.red_pmax = pmax;
  return c;
}

TEST(EcnMarker, StepMarksStrictlyAboveK) {
  EcnMarker m(step(3000), 1);
  EXPECT_FALSE(m.should_mark(0, true));
  EXPECT_FALSE(m.should_mark(2999, true));
  EXPECT_FALSE(m.should_mark(3000, true));
  EXPECT_TRUE(m.should_mark(3001, true));
  EXPECT_TRUE(m.should_mark(1'000'000, true));
  EXPECT_EQ(m.marks(), 2u);
}

TEST(EcnMarker, NonEctNeverMarked) {
  EcnMarker s(step(0), 1);
  EcnMarker r(red(0, 10, 1.0), 1);
  for (uint64_t q = 0; q < 100'000; q += 7) {
    EXPECT_FALSE(s.should_mark(q, false));
    EXPECT_FALSE(r.should_mark(q, false));
  }
  EXPECT_EQ(s.marks(), 0u);
  EXPECT_EQ(r.marks(), 0u);
}

TEST(EcnMarker, OffNeverMarks) {
  EcnMarker m(EcnConfig{}, 1);
  EXPECT_FALSE(m.should_mark(1ull << 40, true));
}

TEST(EcnMarker, RedFollowsTheLinearRamp) {
  // min 10 KB, max 30 KB, pmax 0.2: p = 0.2 (q - 10000) / 20000.
  struct Point {
    uint64_t q;
    double p;
  };
  const Point points[] = {{0, 0.0},     {9999, 0.0},   {10000, 0.0}, {15000, 0.05},
                          {20000, 0.1}, {29000, 0.19}, {30000, 1.0}, {500000, 1.0}};
  const int kTrials = 100'000;
  for (const Point& pt : points) {
    EcnMarker m(red(10000, 30000, 0.2), 42);
    int marked = 0;
    for (int i = 0; i < kTrials; ++i) marked += m.should_mark(pt.q, true);
    EXPECT_EQ(m.marks(), static_cast<uint64_t>(marked));
    // Binomial sd is at most 0.0016 here; 0.01 is > 6 sd (and the seed is fixed).
    EXPECT_NEAR(static_cast<double>(marked) / kTrials, pt.p, 0.01) << "q=" << pt.q;
  }
}

TEST(EcnMarker, RejectsBadRed) {
  EXPECT_THROW(EcnMarker(red(100, 100, 0.1), 1), std::invalid_argument);
  EXPECT_THROW(EcnMarker(red(100, 200, 1.5), 1), std::invalid_argument);
}

}  // namespace
}  // namespace sluice

namespace sluice {
namespace {

TEST(EcnMarker, StepAtTheLargestKNeverMarks) {
  EcnConfig c;
  c.mode = EcnMode::kStep;
  c.step_k_bytes = UINT64_MAX;
  EcnMarker m(c, 1);
  EXPECT_FALSE(m.should_mark(UINT64_MAX, true));
  EXPECT_FALSE(m.should_mark(UINT64_MAX - 1, true));
}

TEST(EcnMarker, RedFromZeroMarksAtAndAboveMax) {
  EcnConfig c;
  c.mode = EcnMode::kRed;
  c.red_min_bytes = 0;
  c.red_max_bytes = 10;
  c.red_pmax = 0.0;
  EcnMarker m(c, 1);
  for (uint64_t q = 0; q < 10; ++q) EXPECT_FALSE(m.should_mark(q, true)) << q;
  EXPECT_TRUE(m.should_mark(10, true));
  EXPECT_EQ(m.marks(), 1u);
}

}  // namespace
}  // namespace sluice
