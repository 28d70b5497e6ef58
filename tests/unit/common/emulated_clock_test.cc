#include "lib/common/emulated_clock.h"

#include <gtest/gtest.h>

namespace sluice {
namespace {

TEST(EmulatedClock, RealTimeFollowsTheMachineThroughAnyStall) {
  EmulatedClock c;
  c.start(1'000);
  EXPECT_EQ(c.advance(2'000), 2'000u);
  EXPECT_EQ(c.advance(5'000'000), 5'000'000u);
  EXPECT_EQ(c.frozen_ns(), 0u);
  EXPECT_FALSE(c.is_virtual());
}

TEST(EmulatedClock, VirtualTimeAdvancesAtMostOneStepPerReading) {
  EmulatedClock c(5'000);
  c.start(1'000'000);
  EXPECT_EQ(c.advance(1'003'000), 1'003'000u);  // within the step: real time
  // A 300 us stall: the fabric sees 5 us pass, the other 295 us are frozen.
  EXPECT_EQ(c.advance(1'303'000), 1'008'000u);
  EXPECT_EQ(c.frozen_ns(), 295'000u);
  // Afterwards it runs at the machine's pace again, 295 us behind.
  EXPECT_EQ(c.advance(1'304'000), 1'009'000u);
  EXPECT_EQ(c.advance(1'309'000), 1'014'000u);  // exactly one step: nothing frozen
  EXPECT_EQ(c.frozen_ns(), 295'000u);
}

TEST(EmulatedClock, NeverGoesBackward) {
  EmulatedClock c(5'000);
  c.start(10'000);
  EXPECT_EQ(c.advance(12'000), 12'000u);
  EXPECT_EQ(c.advance(11'000), 12'000u);  // a reading from before: held
  EXPECT_EQ(c.advance(13'000), 13'000u);
}

TEST(EmulatedClock, StartResetsTheFrozenTime) {
  EmulatedClock c(1'000);
  c.start(0);
  c.advance(10'000);
  EXPECT_EQ(c.frozen_ns(), 9'000u);
  c.start(20'000);
  EXPECT_EQ(c.frozen_ns(), 0u);
  EXPECT_EQ(c.advance(20'500), 20'500u);
}

}  // namespace
}  // namespace sluice
