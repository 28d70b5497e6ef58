// One PAUSE/PFC timer on a simulated clock: open, restart, resume, totals.
#include "lib/emulator/nic/pause_timer.h"

#include <gtest/gtest.h>

namespace sluice {
namespace {

TEST(PauseTimer, HoldsUntilExpiry) {
  PauseTimer t;
  EXPECT_EQ(t.end_ns(), 0u);
  t.apply(1000, 5000);
  EXPECT_FALSE(t.paused_at(999));
  EXPECT_TRUE(t.paused_at(1000));
  EXPECT_TRUE(t.paused_at(5999));
  EXPECT_FALSE(t.paused_at(6000));
  EXPECT_EQ(t.end_ns(), 6000u);
  EXPECT_EQ(t.paused_ns(5999), 4999u);
  EXPECT_EQ(t.paused_ns(1'000'000), 5000u);
}

TEST(PauseTimer, ZeroResumesAtOnceAndIsNothingWhenNotPaused) {
  PauseTimer t;
  t.apply(1000, 5000);
  t.apply(3000, 0);
  EXPECT_TRUE(t.paused_at(2999));
  EXPECT_FALSE(t.paused_at(3000));
  EXPECT_EQ(t.end_ns(), 3000u);
  EXPECT_EQ(t.paused_ns(10'000), 2000u);
  t.apply(20'000, 0);
  EXPECT_FALSE(t.paused_at(20'000));
  EXPECT_EQ(t.paused_ns(30'000), 2000u);
}

TEST(PauseTimer, RefreshReplacesTheEndTime) {
  PauseTimer t;
  t.apply(1000, 5000);
  t.apply(4000, 5000);  // extends to 9000
  EXPECT_TRUE(t.paused_at(8999));
  EXPECT_FALSE(t.paused_at(9000));
  EXPECT_EQ(t.paused_ns(9000), 8000u);
  t.apply(10'000, 5000);
  t.apply(11'000, 1000);  // shortens to 12'000
  EXPECT_TRUE(t.paused_at(11'999));
  EXPECT_FALSE(t.paused_at(12'000));
  EXPECT_EQ(t.paused_ns(50'000), 8000u + 2000);
}

}  // namespace
}  // namespace sluice
