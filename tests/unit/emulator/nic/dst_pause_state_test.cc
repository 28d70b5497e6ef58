// The set of destinations an emulated host NIC holds paused (Floodgate's
// dstPause), with its time integral, on a simulated clock.
#include "lib/emulator/nic/dst_pause_state.h"

#include <gtest/gtest.h>

namespace sluice {
namespace {

TEST(DstPauseState, PausesAndResumesSingleDestinations) {
  DstPauseState s(8);
  EXPECT_FALSE(s.paused(5));
  EXPECT_TRUE(s.apply(100, 5, true));
  EXPECT_TRUE(s.apply(100, 3, true));
  EXPECT_TRUE(s.apply(100, 9, true));
  EXPECT_FALSE(s.apply(150, 3, true)) << "already paused";
  EXPECT_TRUE(s.paused(3) && s.paused(5) && s.paused(9));
  EXPECT_FALSE(s.paused(4) || s.paused(10) || s.paused(1));
  EXPECT_TRUE(s.apply(200, 5, false));
  EXPECT_FALSE(s.apply(200, 5, false)) << "resume of one not paused";
  EXPECT_TRUE(s.paused(3) && s.paused(9));
  EXPECT_FALSE(s.paused(5));
  EXPECT_EQ(s.size(), 2u);
  EXPECT_EQ(s.now_paused.get(), 2u);
  EXPECT_EQ(s.pauses.get(), 4u);
  EXPECT_EQ(s.resumes.get(), 2u);
}

TEST(DstPauseState, DestinationZeroIsNeverPaused) {
  DstPauseState s(8);
  EXPECT_FALSE(s.apply(0, 0, true));
  EXPECT_FALSE(s.paused(0));
  EXPECT_EQ(s.size(), 0u);
}

TEST(DstPauseState, APauseBeyondCapacityIsCountedAndNotHeld) {
  DstPauseState s(2);
  EXPECT_TRUE(s.apply(0, 1, true));
  EXPECT_TRUE(s.apply(0, 2, true));
  EXPECT_FALSE(s.apply(0, 3, true));
  EXPECT_FALSE(s.paused(3));
  EXPECT_EQ(s.overflow.get(), 1u);
  EXPECT_FALSE(s.apply(0, 2, true)) << "a repeat is not an overflow";
  EXPECT_EQ(s.overflow.get(), 1u);
  EXPECT_TRUE(s.apply(10, 1, false));
  EXPECT_TRUE(s.apply(10, 3, true));
  EXPECT_TRUE(s.paused(2) && s.paused(3));
}

TEST(DstPauseState, KeepsItsOrderThroughManyChanges) {
  DstPauseState s(256);
  // Insert out of order, remove every other one: the rest stay found.
  for (uint32_t i = 0; i < 256; ++i) s.apply(0, (i * 97) % 256 + 1, true);
  EXPECT_EQ(s.size(), 256u);
  for (uint32_t d = 2; d <= 256; d += 2) s.apply(0, d, false);
  EXPECT_EQ(s.size(), 128u);
  for (uint32_t d = 1; d <= 256; ++d) EXPECT_EQ(s.paused(d), d % 2 == 1) << d;
}

TEST(DstPauseState, PausedTimeIsSummedOverDestinations) {
  DstPauseState s(8);
  s.apply(1000, 7, true);
  EXPECT_EQ(s.paused_ns(1500), 500u);
  s.apply(2000, 8, true);  // two paused from 2000
  EXPECT_EQ(s.paused_ns(3000), 1000u + 2000u);
  s.apply(3000, 7, false);
  s.apply(4000, 8, false);
  EXPECT_EQ(s.paused_ns(9000), 1000u + 2000u + 1000u);
}

}  // namespace
}  // namespace sluice
