// Floodgate's dstPause: per (host port, destination) bytes in the switch,
// pause above the threshold, resume below it minus the hysteresis.
#include "lib/mechanisms/floodgate/dst_pause_tracker.h"

#include <gtest/gtest.h>

namespace sluice {
namespace {

TEST(FgDstPause, PausesAboveTheThresholdAndResumesBelowTheHysteresis) {
  DstPauseTracker t(16, 10'000, 3'000);
  EXPECT_EQ(t.on_enter(0, 9, 6'000), DstPauseSignal::kNone);
  EXPECT_EQ(t.on_enter(0, 9, 4'000), DstPauseSignal::kNone);  // at, not above
  EXPECT_EQ(t.on_enter(0, 9, 1), DstPauseSignal::kPause);
  EXPECT_EQ(t.on_enter(0, 9, 5'000), DstPauseSignal::kNone);  // already paused
  EXPECT_EQ(t.paused(), 1u);
  EXPECT_EQ(t.on_leave(0, 9, 5'000), DstPauseSignal::kNone);  // 10001
  EXPECT_EQ(t.on_leave(0, 9, 3'000), DstPauseSignal::kNone);  // 7001
  EXPECT_EQ(t.on_leave(0, 9, 1), DstPauseSignal::kResume);    // 7000
  EXPECT_EQ(t.paused(), 0u);
  EXPECT_EQ(t.bytes(0, 9), 7'000u);
}

TEST(FgDstPause, PairsAreIndependent) {
  DstPauseTracker t(16, 1'000, 500);
  EXPECT_EQ(t.on_enter(0, 1, 2'000), DstPauseSignal::kPause);
  EXPECT_EQ(t.on_enter(1, 1, 900), DstPauseSignal::kNone);  // another host
  EXPECT_EQ(t.on_enter(0, 2, 900), DstPauseSignal::kNone);  // another destination
  EXPECT_EQ(t.paused(), 1u);
}

TEST(FgDstPause, ResumesAtZeroEvenWithAHysteresisLargerThanTheThreshold) {
  DstPauseTracker t(16, 1'000, 5'000);
  EXPECT_EQ(t.on_enter(0, 1, 1'500), DstPauseSignal::kPause);
  EXPECT_EQ(t.on_leave(0, 1, 1'000), DstPauseSignal::kNone);
  EXPECT_EQ(t.on_leave(0, 1, 500), DstPauseSignal::kResume);
}

TEST(FgDstPause, AFullTableTracksNoNewPair) {
  DstPauseTracker t(1, 100, 50);
  EXPECT_EQ(t.on_enter(0, 1, 10), DstPauseSignal::kNone);
  EXPECT_EQ(t.on_enter(0, 2, 1000), DstPauseSignal::kNone);
  EXPECT_EQ(t.untracked.get(), 1u);
  EXPECT_EQ(t.on_leave(0, 2, 1000), DstPauseSignal::kNone);
  EXPECT_EQ(t.bytes(0, 1), 10u);
}

}  // namespace
}  // namespace sluice
