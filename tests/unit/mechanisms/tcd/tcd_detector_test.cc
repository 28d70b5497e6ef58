// TCD's per-queue detector with a simulated clock: every transition of the
// state machine, the queue_falling option, time in each state, the ON-period
// histogram, and equivalence with DCTCP step marking when nothing pauses.
#include "lib/mechanisms/tcd/tcd_detector.h"

#include <gtest/gtest.h>

#include <cstdint>

#include "lib/common/xorshift.h"
#include "lib/mechanisms/tcd/tcd_marking.h"
#include "lib/tm/disciplines/ecn_marker.h"

namespace sluice {
namespace {

constexpr TcdState kN = TcdState::kNonCongestion;
constexpr TcdState kC = TcdState::kCongestion;
constexpr TcdState kU = TcdState::kUndetermined;

constexpr uint64_t kQth = 10'000;
constexpr uint64_t kMaxTon = 5'000;  // ns

TcdParams params(bool falling = false, uint64_t interval_ns = 0) {
  TcdParams p;
  p.q_th_bytes = kQth;
  p.max_t_on_ns = kMaxTon;
  p.queue_falling = falling;
  p.falling_interval_ns = interval_ns;
  return p;
}

uint64_t transitions(const TcdDetector& d, TcdState from, TcdState to) {
  return d.stats().transitions[index_of(from)][index_of(to)].get();
}

uint64_t total_transitions(const TcdDetector& d) {
  uint64_t n = 0;
  for (unsigned f = 0; f < kTcdStates; ++f) {
    for (unsigned t = 0; t < kTcdStates; ++t) n += d.stats().transitions[f][t].get();
  }
  return n;
}

TEST(TcdDetector, NeverPausedIsNonCongestionAtOrBelowQthAndCongestionAbove) {
  TcdDetector d(params(), 1'000);
  EXPECT_EQ(d.last_state(), kN);
  EXPECT_FALSE(d.off());
  EXPECT_EQ(d.state(1'000, 0), kN);
  EXPECT_EQ(d.state(1'001, kQth), kN);      // not above q_th
  EXPECT_EQ(d.state(1'002, kQth + 1), kC);  // T_on unbounded before any pause
  EXPECT_EQ(d.state(1'003, kQth + 50'000), kC);
  EXPECT_EQ(d.state(1'004, kQth), kN);  // congestion -> non-congestion at <= q_th
  EXPECT_EQ(transitions(d, kN, kC), 1u);
  EXPECT_EQ(transitions(d, kC, kN), 1u);
  EXPECT_EQ(total_transitions(d), 2u);
  EXPECT_EQ(d.stats().pauses.get(), 0u);
}

// Exact fabric time evaluates an idle detector only when next_due_ns()
// says: the instant T_on passes max_T_on after a resume, and never when
// nothing can change without a packet or a pause.
TEST(TcdDetector, NextDueIsWhenUndeterminedRunsOut) {
  TcdDetector d(params(), 0);
  EXPECT_EQ(d.next_due_ns(), UINT64_MAX);  // never paused
  d.on_pause(1'000);
  d.state(1'000, kQth + 1);
  EXPECT_EQ(d.next_due_ns(), UINT64_MAX);  // OFF: only a resume changes it
  d.on_resume(2'000);
  d.state(2'000, kQth + 1);
  EXPECT_EQ(d.next_due_ns(), 2'000 + kMaxTon + 1);
  EXPECT_EQ(d.state(2'000 + kMaxTon, kQth + 1), TcdState::kUndetermined);
  EXPECT_EQ(d.state(d.next_due_ns(), kQth + 1), kC);
  EXPECT_EQ(d.next_due_ns(), UINT64_MAX);
}

TEST(TcdDetector, EveryPauseMakesItUndeterminedWhateverItWas) {
  TcdDetector d(params(), 0);
  d.on_pause(100);  // from non-congestion
  EXPECT_TRUE(d.off());
  EXPECT_EQ(d.last_state(), kU);
  EXPECT_EQ(transitions(d, kN, kU), 1u);

  TcdDetector c(params(), 0);
  ASSERT_EQ(c.state(50, kQth + 1), kC);
  c.on_pause(100);  // from congestion
  EXPECT_EQ(c.last_state(), kU);
  EXPECT_EQ(transitions(c, kC, kU), 1u);
  EXPECT_EQ(c.stats().pauses.get(), 1u);
}

TEST(TcdDetector, UndeterminedWhileOffWhateverTheQueueAndTheTime) {
  TcdDetector d(params(), 0);
  d.on_pause(100);
  EXPECT_EQ(d.state(200, 0), kU);
  EXPECT_EQ(d.state(100'000, kQth + 1), kU);
  EXPECT_EQ(d.state(10'000'000, 0), kU);
  d.settle(20'000'000);
  EXPECT_EQ(d.last_state(), kU);
  EXPECT_EQ(total_transitions(d), 1u);
}

TEST(TcdDetector, ARefreshedPauseOrASecondResumeIsNoTransition) {
  TcdDetector d(params(), 0);
  d.on_pause(100);
  d.on_pause(200);
  EXPECT_EQ(d.stats().pauses.get(), 1u);
  d.on_resume(300);
  d.on_resume(400);  // T_on still counts from 300
  EXPECT_EQ(d.state(300 + kMaxTon, kQth + 1), kU);
  EXPECT_EQ(d.state(301 + kMaxTon, kQth + 1), kC);
}

TEST(TcdDetector, UndeterminedWhileOnUpToMaxTonThenByTheQueue) {
  for (uint64_t q : {uint64_t{0}, kQth, kQth + 1}) {
    SCOPED_TRACE(q);
    TcdDetector d(params(), 0);
    d.on_pause(1'000);
    d.on_resume(2'000);
    EXPECT_FALSE(d.off());
    EXPECT_EQ(d.state(2'000, q), kU);
    EXPECT_EQ(d.state(2'000 + kMaxTon, q), kU);  // T_on == max_T_on: still undetermined
    const TcdState want = q > kQth ? kC : kN;
    EXPECT_EQ(d.state(2'001 + kMaxTon, q), want);
    EXPECT_EQ(transitions(d, kU, want), 1u);
  }
}

TEST(TcdDetector, NonCongestionToCongestionOnlyWhenOnAndPastMaxTon) {
  TcdDetector d(params(), 0);
  d.on_pause(1'000);
  d.on_resume(2'000);
  ASSERT_EQ(d.state(2'000 + kMaxTon + 1, 0), kN);
  EXPECT_EQ(d.state(2'000 + kMaxTon + 2, kQth + 1), kC);
  EXPECT_EQ(transitions(d, kN, kC), 1u);
  EXPECT_EQ(d.state(2'000 + kMaxTon + 3, kQth), kN);
  EXPECT_EQ(transitions(d, kC, kN), 1u);
}

TEST(TcdDetector, ExpiryWithoutAnEvaluationIsTimedAtMaxTonAndJudgedOnTheLastQueue) {
  TcdDetector d(params(), 0);
  EXPECT_EQ(d.state(500, kQth + 7), kC);
  d.on_pause(1'000);
  EXPECT_EQ(d.state(1'500, kQth + 7), kU);  // last queue seen: above q_th
  d.on_resume(2'000);
  // No evaluation after the resume: at 20'000 the queue stopped being
  // undetermined at 2'000 + max_T_on, congested by the last queue seen.
  const uint64_t end = 2'000 + kMaxTon;
  EXPECT_EQ(d.time_in_ns(kU, 20'000), end - 1'000);
  EXPECT_EQ(d.time_in_ns(kC, 20'000), 500 + (20'000 - end));
  EXPECT_EQ(d.time_in_ns(kN, 20'000), 500u);
  d.settle(20'000);
  EXPECT_EQ(d.last_state(), kC);
  EXPECT_EQ(transitions(d, kU, kC), 1u);
  EXPECT_EQ(d.stats().time_ns[index_of(kU)].get(), end - 1'000);
  EXPECT_EQ(d.stats().time_ns[index_of(kC)].get(), 500 + (20'000 - end));
  // The next evaluation sees the queue now.
  EXPECT_EQ(d.state(20'001, 0), kN);
}

TEST(TcdDetector, AnEvaluationPastMaxTonCountsTheQueueFromTheExpiry) {
  TcdDetector d(params(), 0);
  d.on_pause(1'000);
  d.on_resume(2'000);
  // Last queue seen 0: non-congestion from the expiry, then congestion now.
  EXPECT_EQ(d.state(2'000 + kMaxTon + 1'000, kQth + 1), kC);
  EXPECT_EQ(transitions(d, kU, kN), 1u);
  EXPECT_EQ(transitions(d, kN, kC), 1u);
  EXPECT_EQ(d.time_in_ns(kN, 2'000 + kMaxTon + 1'000), 1'000u + 1'000u);  // before pause, then
  EXPECT_EQ(d.time_in_ns(kU, 2'000 + kMaxTon + 1'000), 1'000u + kMaxTon);
}

TEST(TcdDetector, PauseBeforeMaxTonKeepsItUndetermined) {
  TcdDetector d(params(), 0);
  d.on_pause(1'000);
  d.on_resume(2'000);
  EXPECT_EQ(d.state(3'000, kQth + 1), kU);
  d.on_pause(2'000 + kMaxTon);  // a pause at T_on == max_T_on
  d.on_resume(10'000);
  EXPECT_EQ(d.state(10'000 + kMaxTon, kQth + 1), kU);
  EXPECT_EQ(total_transitions(d), 1u);  // N -> U once; U -> U is not a transition
  EXPECT_EQ(d.stats().pauses.get(), 2u);
}

TEST(TcdDetector, AnExpiredUndeterminedPausedAgainChargesTheExpiryFirst) {
  TcdDetector d(params(), 0);
  d.on_pause(1'000);
  d.on_resume(2'000);
  d.on_pause(2'000 + kMaxTon + 300);
  EXPECT_EQ(transitions(d, kU, kN), 1u);
  EXPECT_EQ(transitions(d, kN, kU), 2u);
  EXPECT_EQ(d.time_in_ns(kN, 2'000 + kMaxTon + 300), 1'000u + 300u);
}

TEST(TcdDetector, QueueFallingIsOffByDefault) {
  TcdDetector d(params(), 0);
  d.on_pause(1'000);
  d.on_resume(2'000);
  EXPECT_EQ(d.state(2'100, 50'000), kU);
  EXPECT_EQ(d.state(2'200, 40'000), kU);
  EXPECT_EQ(d.state(2'300, 0), kU);
}

TEST(TcdDetector, QueueFallingLeavesUndeterminedForNonCongestion) {
  TcdDetector d(params(true, 1'000), 0);
  d.on_pause(1'000);
  EXPECT_EQ(d.state(1'500, 60'000), kU);  // samples only while ON
  d.on_resume(2'000);
  EXPECT_EQ(d.state(2'100, 50'000), kU);  // the reference sample
  EXPECT_EQ(d.state(2'500, 10'000), kU);  // lower, but within falling_interval
  EXPECT_EQ(d.state(3'100, 40'000), kN);  // 1000 ns after the reference, lower
  EXPECT_EQ(transitions(d, kU, kN), 1u);
  // Non-congestion with T_on <= max_T_on does not become congestion...
  EXPECT_EQ(d.state(3'200, kQth + 1), kN);
  EXPECT_EQ(d.state(2'000 + kMaxTon, kQth + 1), kN);
  // ...until T_on > max_T_on.
  EXPECT_EQ(d.state(2'001 + kMaxTon, kQth + 1), kC);
}

TEST(TcdDetector, QueueFallingNeedsALowerSampleInTheSameOnPeriod) {
  TcdDetector d(params(true, 1'000), 0);
  d.on_pause(1'000);
  d.on_resume(2'000);
  EXPECT_EQ(d.state(2'000, 50'000), kU);
  EXPECT_EQ(d.state(3'000, 50'000), kU);  // equal is not falling; new reference
  EXPECT_EQ(d.state(4'000, 60'000), kU);  // rising; new reference
  d.on_pause(4'500);
  d.on_resume(5'000);
  // The reference of the last ON period is gone: this is the first sample.
  EXPECT_EQ(d.state(6'000, 100), kU);
  EXPECT_EQ(d.state(7'000, 99), kN);
}

TEST(TcdDetector, QueueFallingWithZeroIntervalComparesConsecutiveEvaluations) {
  TcdDetector d(params(true, 0), 0);
  d.on_pause(10);
  d.on_resume(20);
  EXPECT_EQ(d.state(20, 3'000), kU);
  EXPECT_EQ(d.state(20, 1'500), kN);
}

TEST(TcdDetector, TimeInEachStateAddsUpToTheElapsedTime) {
  TcdDetector d(params(), 1'000);
  d.state(2'000, kQth + 1);              // N [1000, 2000)
  d.on_pause(2'500);                     // C [2000, 2500)
  d.on_resume(4'000);                    // U from 2500
  d.state(5'000, kQth);                  // still U (T_on 1000)
  d.state(4'000 + kMaxTon + 500, kQth);  // U until 4000 + max, then N
  const uint64_t now = 4'000 + kMaxTon + 2'000;
  EXPECT_EQ(d.time_in_ns(kN, now), 1'000u + 2'000u);
  EXPECT_EQ(d.time_in_ns(kC, now), 500u);
  EXPECT_EQ(d.time_in_ns(kU, now), 1'500u + kMaxTon);
  uint64_t sum = 0;
  for (TcdState s : {kN, kC, kU}) sum += d.time_in_ns(s, now);
  EXPECT_EQ(sum, now - 1'000);
  // Settling moves the open part into the counters, monotonically.
  d.settle(now);
  EXPECT_EQ(d.stats().time_ns[index_of(kN)].get(), 3'000u);
  EXPECT_EQ(d.stats().time_ns[index_of(kC)].get(), 500u);
  EXPECT_EQ(d.stats().time_ns[index_of(kU)].get(), 1'500u + kMaxTon);
  d.settle(now);
  EXPECT_EQ(d.stats().time_ns[index_of(kN)].get(), 3'000u);
}

TEST(TcdDetector, SettlingInsideAnOnPeriodKeepsTheExpiryExact) {
  TcdDetector d(params(), 0);
  d.on_pause(1'000);
  d.on_resume(2'000);
  d.settle(3'000);  // inside undetermined
  EXPECT_EQ(d.stats().time_ns[index_of(kU)].get(), 2'000u);
  d.settle(2'000 + kMaxTon + 100);
  EXPECT_EQ(d.stats().time_ns[index_of(kU)].get(), 1'000u + kMaxTon);
  EXPECT_EQ(d.stats().time_ns[index_of(kN)].get(), 1'000u + 100u);
}

TEST(TcdDetector, TimeNeverGoesBackwards) {
  TcdDetector d(params(), 1'000);
  d.on_pause(5'000);
  d.on_resume(4'000);  // earlier than seen: counts as 5'000
  EXPECT_EQ(d.time_in_ns(kU, 3'000), 0u);
  EXPECT_EQ(d.time_in_ns(kN, 3'000), 4'000u);
  EXPECT_EQ(d.state(5'000 + kMaxTon, kQth + 1), kU);
  EXPECT_EQ(d.state(5'001 + kMaxTon, kQth + 1), kC);
}

TEST(TcdDetector, OnPeriodsAreRecordedAtEachPauseButNotTheFirstOnTime) {
  TcdDetector d(params(), 0);
  d.on_pause(1'000'000);  // ON since construction: not an ON period
  EXPECT_EQ(d.stats().on_periods.total(), 0u);
  d.on_resume(1'001'000);
  d.on_pause(1'001'150);  // 150 ns
  d.on_resume(1'002'000);
  d.on_pause(1'022'000);  // 20 us
  d.on_resume(1'030'000);
  d.on_pause(1'030'000);  // 0 ns
  const LatencyHistogram& h = d.stats().on_periods;
  EXPECT_EQ(h.total(), 3u);
  EXPECT_EQ(h.sum_ns(), 150u + 20'000u);
  EXPECT_EQ(h.count(LatencyHistogram::bucket_of(0)), 1u);
  EXPECT_EQ(h.count(1), 1u);  // (100, 200] ns
  EXPECT_EQ(h.count(8), 1u);  // (12.8, 25.6] us
  EXPECT_EQ(d.stats().pauses.get(), 4u);
}

// With no pause ever, TCD at K = q_th marks exactly the packets DCTCP step
// marking marks, given the same queue at each decision, whatever the
// packets' ECN fields and the time between decisions.
TEST(TcdDetector, WithoutPausesMarksExactlyWhatDctcpStepMarkingMarks) {
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    Xorshift64 rng(seed);
    const uint64_t k = 2 + rng.next() % 200'000;
    EcnConfig ecn;
    ecn.mode = EcnMode::kStep;
    ecn.step_k_bytes = k;
    EcnMarker dctcp(ecn, seed);
    TcdParams p;
    p.q_th_bytes = k;
    p.max_t_on_ns = rng.next() % 1'000'000;
    TcdDetector tcd(p, 0);
    TcdMarker marker;
    uint64_t now = 0, dctcp_marks = 0;
    for (int i = 0; i < 20'000; ++i) {
      now += rng.next() % 5'000;
      // Queues clustered around K so both sides of the threshold, and K
      // itself, come up often.
      const uint64_t r = rng.next();
      const uint64_t q = (r & 3) == 0   ? k
                         : (r & 3) == 1 ? rng.next() % (2 * k + 2)
                                        : k - 2 + rng.next() % 5;
      const uint8_t field = static_cast<uint8_t>(rng.next() & 3);
      const bool marked = dctcp.should_mark(q, field != 0);
      const uint8_t want = marked ? uint8_t{3} : field;
      dctcp_marks += marked && field != 3;
      ASSERT_EQ(marker.mark(tcd.state(now, q), field), want)
          << "seed " << seed << " step " << i << " q " << q << " k " << k;
    }
    EXPECT_EQ(marker.ce_marks.get(), dctcp_marks);
    EXPECT_EQ(marker.ue_marks.get(), 0u);
    EXPECT_EQ(tcd.time_in_ns(kU, now), 0u);
  }
}

}  // namespace
}  // namespace sluice
