// TcdPort with a simulated clock: pauses reach the right queue's detector
// as ON/OFF (with the resume time the caller gives), marking per queue, the
// timer's evaluation of idle queues, and the per-port sums.
#include "lib/mechanisms/tcd/tcd_port.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <vector>

namespace sluice {
namespace {

constexpr uint64_t kQth = 10'000;
constexpr uint64_t kMaxTon = 5'000;
constexpr uint8_t kEct0 = 0b10;

TcdParams params() {
  TcdParams p;
  p.q_th_bytes = kQth;
  p.max_t_on_ns = kMaxTon;
  return p;
}

TEST(TcdPort, RejectsQueueCountsOutside1To64) {
  EXPECT_THROW(TcdPort(params(), {}, 0, 0), std::invalid_argument);
  EXPECT_THROW(TcdPort(params(), {}, 65, 0), std::invalid_argument);
  EXPECT_EQ(TcdPort(params(), {}, 64, 0).num_queues(), 64u);
}

TEST(TcdPort, PauseBitsTurnTheirOwnQueuesOffAndOnAtTheGivenTime) {
  TcdPort port(params(), {}, 4, 0);
  std::vector<uint16_t> asked;
  auto resumed_at = [&](unsigned q, uint64_t since) {
    EXPECT_EQ(since, 1'200u);  // the last call that saw it paused
    asked.push_back(static_cast<uint16_t>(q));
    return uint64_t{1'500};
  };
  port.track_pauses(0b0101, 1'000, resumed_at);
  EXPECT_TRUE(port.detector(0).off());
  EXPECT_FALSE(port.detector(1).off());
  EXPECT_TRUE(port.detector(2).off());
  port.track_pauses(0b0101, 1'200, resumed_at);  // unchanged: nothing happens
  EXPECT_TRUE(asked.empty());
  port.track_pauses(0b0001, 2'000, resumed_at);  // queue 2 resumed (at 1,500)
  EXPECT_EQ(asked, std::vector<uint16_t>{2});
  EXPECT_FALSE(port.detector(2).off());
  EXPECT_EQ(port.pauses(), 2u);
  // Queue 2 is ON since 1,500: undetermined until 1,500 + max_T_on.
  EXPECT_EQ(port.mark(2, 6'499, kQth + 1, kEct0), 0b01);   // UE
  EXPECT_EQ(port.mark(2, 6'501, kQth + 1, kEct0), 0b11);   // then CE
  // Queue 1 was never paused: DCTCP's step rule.
  EXPECT_EQ(port.mark(1, 6'600, kQth, kEct0), kEct0);
  EXPECT_EQ(port.mark(1, 6'601, kQth + 1, kEct0), 0b11);
  EXPECT_EQ(port.marker().ue_marks.get(), 1u);
  EXPECT_EQ(port.marker().ce_marks.get(), 2u);
}

TEST(TcdPort, NotEctIsNeverMarkedNorEvaluated) {
  TcdPort port(params(), {}, 1, 0);
  port.track_pauses(1, 10, [](unsigned, uint64_t) { return uint64_t{0}; });
  EXPECT_EQ(port.mark(0, 20, kQth * 10, 0b00), 0b00);
  EXPECT_EQ(port.marker().ue_marks.get() + port.marker().ce_marks.get(), 0u);
}

TEST(TcdPort, TickLetsAnIdleQueueLeaveUndeterminedAndSettlesTime) {
  TcdPort port(params(), {}, 2, 0);
  port.track_pauses(0b10, 1'000, [](unsigned, uint64_t) { return uint64_t{0}; });
  port.track_pauses(0b00, 2'000, [](unsigned, uint64_t) { return uint64_t{2'000}; });
  std::vector<uint64_t> bytes{0, 0};
  port.tick(10'000, [&](unsigned q) { return bytes[q]; });
  EXPECT_EQ(port.detector(1).last_state(), TcdState::kNonCongestion);
  // Queue 1 was undetermined from its pause at 1,000 until 2,000 + max_T_on.
  EXPECT_EQ(port.time_ns(TcdState::kUndetermined), 2'000 + kMaxTon - 1'000);
  EXPECT_EQ(port.time_ns(TcdState::kNonCongestion) + port.time_ns(TcdState::kUndetermined) +
                port.time_ns(TcdState::kCongestion),
            2 * 10'000u);  // every ns of both queues charged to one state
  EXPECT_EQ(port.transitions(TcdState::kNonCongestion, TcdState::kUndetermined), 1u);
  EXPECT_EQ(port.transitions(TcdState::kUndetermined, TcdState::kNonCongestion), 1u);
}

TEST(TcdPort, TimeIsChargedFromStartNotFromConstruction) {
  TcdPort port(params(), {}, 1, 0);
  port.start(1'000'000);
  port.tick(1'000'500, [](unsigned) { return uint64_t{0}; });
  EXPECT_EQ(port.time_ns(TcdState::kNonCongestion), 500u);
}

TEST(TcdPort, OnPeriodsOfAllQueuesAddUp) {
  TcdPort port(params(), {}, 2, 0);
  auto at = [](uint64_t t) { return [t](unsigned, uint64_t) { return t; }; };
  port.track_pauses(0b11, 100, at(0));
  port.track_pauses(0b00, 200, at(200));
  port.track_pauses(0b11, 1'200, at(0));  // both ON for 1,000 ns
  LatencyHistogram h;
  port.add_on_periods(&h);
  EXPECT_EQ(h.total(), 2u);
  EXPECT_EQ(h.sum_ns(), 2'000u);
}

}  // namespace
}  // namespace sluice
