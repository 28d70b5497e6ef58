// Due times are computed by hand from the rule in replay_schedule.h:
// start + floor((pass * pass_length + offset) / speed).
#include "lib/capture/replay_schedule.h"

#include <gtest/gtest.h>

#include <vector>

namespace sluice {
namespace {

using Dues = std::vector<uint64_t>;

// Releases `count` frames, each at exactly its due time; returns the due times.
Dues dues_of(ReplaySchedule& s, size_t count) {
  Dues out;
  for (size_t i = 0; i < count && !s.done(); ++i) {
    out.push_back(s.due_ns());
    EXPECT_TRUE(s.ready(s.due_ns()));
    if (s.due_ns() > 0) {
      EXPECT_FALSE(s.ready(s.due_ns() - 1)) << "frame " << i << " ready before its due time";
    }
    s.advance();
  }
  return out;
}

const std::vector<uint64_t> kOffsets = {0, 100, 250, 1000};

TEST(CaptureOffsets, RelativeToFirstAndNeverDecreasing) {
  EXPECT_EQ(
      capture_offsets({1'000'000'000'123, 1'000'000'000'623, 1'000'000'000'523, 1'000'000'002'123}),
      (std::vector<uint64_t>{0, 500, 500, 2000}));
  EXPECT_EQ(capture_offsets({}), std::vector<uint64_t>{});
  EXPECT_EQ(capture_offsets({7}), std::vector<uint64_t>{0});
  // A timestamp before the first one counts as the first one's.
  EXPECT_EQ(capture_offsets({100, 50, 300}), (std::vector<uint64_t>{0, 0, 200}));
}

TEST(ReplaySchedule, PacedSpeedOne) {
  ReplaySchedule s(kOffsets, PcapReplayMode::kPaced, false, 1.0);
  s.start(5000);
  EXPECT_EQ(dues_of(s, 10), (Dues{5000, 5100, 5250, 6000}));
  EXPECT_TRUE(s.done());
  EXPECT_FALSE(s.ready(UINT64_MAX));
}

TEST(ReplaySchedule, PacedSpeedTwoHalvesCaptureTime) {
  ReplaySchedule s({0, 100, 333, 1000}, PcapReplayMode::kPaced, false, 2.0);
  s.start(5000);
  EXPECT_EQ(dues_of(s, 10), (Dues{5000, 5050, 5166, 5500}));  // 333 / 2 = 166.5, floored
}

TEST(ReplaySchedule, PacedSpeedHalfDoublesCaptureTime) {
  ReplaySchedule s(kOffsets, PcapReplayMode::kPaced, false, 0.5);
  s.start(5000);
  EXPECT_EQ(dues_of(s, 10), (Dues{5000, 5200, 5500, 7000}));
}

TEST(ReplaySchedule, LargeCaptureTimesStayExact) {
  // 10 hours of capture at speed 1 and 2: no precision lost.
  const uint64_t ten_hours = 36'000'000'000'000ull + 7;
  ReplaySchedule s1({0, ten_hours}, PcapReplayMode::kPaced, false, 1.0);
  s1.start(1'000'000'000'000'000'001ull);
  EXPECT_EQ(dues_of(s1, 2), (Dues{1'000'000'000'000'000'001ull, 1'000'036'000'000'000'008ull}));
  ReplaySchedule s2({0, ten_hours}, PcapReplayMode::kPaced, false, 2.0);
  s2.start(0);
  EXPECT_EQ(dues_of(s2, 2), (Dues{0, 18'000'000'000'003ull}));
}

TEST(ReplaySchedule, LoopAddsOneAverageGapBetweenPasses) {
  // Duration 1000 over 3 gaps: average gap 333.33 -> 333, pass length 1333.
  ReplaySchedule s(kOffsets, PcapReplayMode::kPaced, true, 1.0);
  EXPECT_EQ(s.pass_length_ns(), 1333u);
  s.start(5000);
  EXPECT_EQ(dues_of(s, 10), (Dues{5000, 5100, 5250, 6000,  // pass 0
                                  6333, 6433, 6583, 7333,  // pass 1
                                  7666, 7766}));           // pass 2
  EXPECT_EQ(s.pass(), 2u);
  EXPECT_EQ(s.frame(), 2u);
  EXPECT_FALSE(s.done());
}

TEST(ReplaySchedule, LoopWithSpeed) {
  ReplaySchedule s(kOffsets, PcapReplayMode::kPaced, true, 2.0);
  s.start(0);
  // Pass 1: (1333 + offset) / 2, floored.
  EXPECT_EQ(dues_of(s, 8), (Dues{0, 50, 125, 500, 666, 716, 791, 1166}));
}

TEST(ReplaySchedule, AverageGapRoundsToNearest) {
  ReplaySchedule a({0, 400, 1001}, PcapReplayMode::kPaced, true, 1.0);  // 500.5 -> 501
  EXPECT_EQ(a.pass_length_ns(), 1502u);
  ReplaySchedule b({0, 10, 20, 1000}, PcapReplayMode::kPaced, true, 1.0);  // 333.3 -> 333
  EXPECT_EQ(b.pass_length_ns(), 1333u);
  ReplaySchedule c({0, 998}, PcapReplayMode::kPaced, true, 1.0);  // one gap: 998
  EXPECT_EQ(c.pass_length_ns(), 1996u);
}

TEST(ReplaySchedule, NothingBeforeStart) {
  ReplaySchedule s(kOffsets, PcapReplayMode::kPaced, false, 1.0);
  EXPECT_FALSE(s.started());
  EXPECT_FALSE(s.ready(UINT64_MAX));
  ReplaySchedule f(kOffsets, PcapReplayMode::kFast, false, 1.0);
  EXPECT_FALSE(f.ready(UINT64_MAX));
}

TEST(ReplaySchedule, FastModeReleasesEverythingAtOnce) {
  ReplaySchedule s(kOffsets, PcapReplayMode::kFast, false, 1.0);
  s.start(5000);
  for (size_t i = 0; i < 4; ++i) {
    ASSERT_TRUE(s.ready(5000)) << i;
    EXPECT_EQ(s.frame(), i);
    s.advance();
  }
  EXPECT_TRUE(s.done());
  EXPECT_FALSE(s.ready(UINT64_MAX));
}

TEST(ReplaySchedule, FastLoopNeverEnds) {
  ReplaySchedule s(kOffsets, PcapReplayMode::kFast, true, 1.0);
  s.start(0);
  for (size_t i = 0; i < 4 * 1000 + 1; ++i) {
    ASSERT_TRUE(s.ready(0));
    ASSERT_EQ(s.frame(), i % 4);
    s.advance();
  }
  EXPECT_EQ(s.pass(), 1000u);
}

TEST(ReplaySchedule, EmptyCaptureIsDoneEvenWhenLooping) {
  for (auto mode : {PcapReplayMode::kPaced, PcapReplayMode::kFast}) {
    ReplaySchedule s({}, mode, true, 1.0);
    s.start(0);
    EXPECT_TRUE(s.done());
    EXPECT_FALSE(s.ready(UINT64_MAX));
    s.advance();  // harmless
    EXPECT_TRUE(s.done());
  }
}

TEST(ReplaySchedule, SingleFrameLoopRepeatsAtStart) {
  // One frame has no duration and no gap: a looped replay repeats it at once.
  ReplaySchedule s({0}, PcapReplayMode::kPaced, true, 1.0);
  EXPECT_EQ(s.pass_length_ns(), 0u);
  s.start(100);
  EXPECT_EQ(dues_of(s, 3), (Dues{100, 100, 100}));
}

TEST(ReplaySchedule, RestartBeginsAgain) {
  ReplaySchedule s(kOffsets, PcapReplayMode::kPaced, false, 1.0);
  s.start(0);
  dues_of(s, 4);
  s.start(10'000);
  EXPECT_EQ(dues_of(s, 4), (Dues{10'000, 10'100, 10'250, 11'000}));
}

// A data path polling at irregular instants: every frame is released at the
// first poll at or after its due time, never before, and in file order.
TEST(ReplaySchedule, PollingNeverReleasesEarlyAndKeepsOrder) {
  const std::vector<uint64_t> offsets = {0, 0, 7, 7, 19, 300, 301, 302, 999, 5000};
  ReplaySchedule s(offsets, PcapReplayMode::kPaced, true, 1.5);
  const uint64_t pass = 5000 + 556;  // 5000 / 9 = 555.6 -> 556
  ASSERT_EQ(s.pass_length_ns(), pass);
  s.start(1000);
  uint64_t now = 0;
  uint64_t step = 1;
  size_t released = 0;
  uint64_t previous_due = 0;
  while (released < 3 * offsets.size()) {
    while (s.ready(now)) {
      const size_t i = released % offsets.size();
      const uint64_t pass_index = released / offsets.size();
      const uint64_t expected =
          1000 + static_cast<uint64_t>((pass_index * pass + offsets[i]) / 1.5);  // floor
      ASSERT_EQ(s.frame(), i);
      ASSERT_EQ(s.due_ns(), expected);
      ASSERT_LE(s.due_ns(), now);
      ASSERT_GE(s.due_ns(), previous_due);
      previous_due = s.due_ns();
      s.advance();
      ++released;
    }
    // Not ready: the next frame is really not due yet.
    ASSERT_GT(s.due_ns(), now);
    now += step;
    step = step * 7 % 23 + 1;  // irregular steps of 1..23 ns
  }
}

TEST(FirstFrameDue, CapturesKeepTheirOffsetFromTheSharedOrigin) {
  // The earliest capture's first frame (origin 1000) is due at start.
  EXPECT_EQ(first_frame_due_ns(5'000'000, 1000, 1000, 1.0), 5'000'000u);
  // A capture whose first frame is 220 us later starts 220 us later...
  EXPECT_EQ(first_frame_due_ns(5'000'000, 221'000, 1000, 1.0), 5'220'000u);
  // ... or 110 us later at speed 2.
  EXPECT_EQ(first_frame_due_ns(5'000'000, 221'000, 1000, 2.0), 5'110'000u);
  // Never before the start.
  EXPECT_EQ(first_frame_due_ns(5'000'000, 500, 1000, 1.0), 5'000'000u);
}

}  // namespace
}  // namespace sluice
