// TIMELY's Algorithm 1 (Mittal et al., SIGCOMM 2015, section 4) and the TCD
// paper's UE-aware TIMELY (Zhang et al., SIGCOMM 2021, section 5.2.3)
// against values worked by hand. A 10 Gb/s NIC (the paper's testbed), the
// paper's parameters: alpha 0.875, beta 0.8, delta 10 Mb/s, T_low 50 us,
// T_high 500 us, minRTT 20 us, HAI (5 delta) after 5 events with g <= 0.
#include "lib/emulator/transport/timely/timely_control.h"

#include <gtest/gtest.h>

#include <cstdint>

namespace sluice {
namespace {

constexpr double kG = 1e9;
constexpr double kM = 1e6;

TransportContext ctx10() {
  TransportContext c;
  c.link_rate_bps = 10'000'000'000;
  c.base_rtt_ns = 8'000;
  return c;
}

TimelyParams at(double rate_bps, TimelyParams p = TimelyParams{}) {
  p.initial_rate_bps = static_cast<uint64_t>(rate_bps);
  return p;
}

// Drives one flow: each sample is an ACK arriving 10 ms after the previous,
// echoing a send time rtt_us earlier.
struct Driver {
  TimelyControl& t;
  uint64_t now = 1'000'000'000;
  uint64_t una = 0;
  void sample(uint64_t rtt_us, bool ue = false, bool ce = false) {
    now += 10'000'000;
    una += 1'000;
    Segment a;
    a.kind = SegmentKind::kAck;
    a.seq = una;
    a.ts_ns = now - rtt_us * 1'000;
    a.ue_echo = ue;
    a.ece = ce;
    AckInfo i;
    i.acked_bytes = 1'000;
    i.snd_una = una;
    i.snd_nxt = una + 10'000;
    t.on_ack(now, a, i);
  }
};

TEST(Timely, DefaultsAreThePapersAndTheFlowStartsAtLineRate) {
  TimelyParams p;
  EXPECT_DOUBLE_EQ(p.alpha, 0.875);
  EXPECT_DOUBLE_EQ(p.beta, 0.8);
  EXPECT_EQ(p.delta_bps, 10'000'000u);
  EXPECT_EQ(p.t_low_ns, 50'000u);
  EXPECT_EQ(p.t_high_ns, 500'000u);
  EXPECT_EQ(p.min_rtt_ns, 20'000u);
  EXPECT_EQ(p.hai_after, 5u);
  EXPECT_EQ(p.hai_factor, 5u);
  EXPECT_FALSE(p.ue_aware);
  const TimelyParams tcd = timely_tcd_params();
  EXPECT_TRUE(tcd.ue_aware);
  EXPECT_DOUBLE_EQ(tcd.beta, 1.6);
  EXPECT_DOUBLE_EQ(tcd.alpha, 0.875);
  TimelyControl t(p, ctx10());
  EXPECT_EQ(t.rate_bps(), 10'000'000'000u);
  EXPECT_EQ(t.window_bytes(), kTransportNever);
}

TEST(Timely, FirstSampleOnlySeedsThePreviousRtt) {
  TimelyControl t(at(5 * kG), ctx10());
  Driver d{t};
  d.sample(1'000);  // above T_high, but there is no difference yet
  EXPECT_DOUBLE_EQ(t.rate(), 5 * kG);
  EXPECT_EQ(t.prev_rtt_ns(), 1'000'000u);
  EXPECT_DOUBLE_EQ(t.rtt_diff_ns(), 0.0);
}

TEST(Timely, BelowTlowAddsDeltaWhateverTheGradient) {
  TimelyControl t(at(5 * kG), ctx10());
  Driver d{t};
  d.sample(30);
  d.sample(40);  // rising (g = 0.875 x 10 / 20 > 0), but 40 us < T_low
  EXPECT_NEAR(t.rate(), 5 * kG + 10 * kM, 1e-3);
  EXPECT_EQ(t.rate_bps(), 5'010'000'000u);
  EXPECT_NEAR(t.rtt_diff_ns(), 8'750.0, 1e-9);
}

TEST(Timely, AboveThighCutsByTheExcessWhateverTheGradient) {
  TimelyControl t(at(5 * kG), ctx10());
  Driver d{t};
  d.sample(400);
  d.sample(1'000);  // 1 - 0.8 (1 - 500 / 1000) = 0.6
  EXPECT_NEAR(t.rate(), 3 * kG, 1e-3);
  d.sample(800);  // falling, still above: 1 - 0.8 (1 - 500 / 800) = 0.7
  EXPECT_NEAR(t.rate(), 2.1 * kG, 1e-3);
}

TEST(Timely, PositiveGradientCutsByBetaTimesTheGradient) {
  TimelyControl t(at(5 * kG), ctx10());
  Driver d{t};
  d.sample(100);
  // rtt_diff = 0.875 x 4 us = 3.5 us; g = 3.5 / 20 = 0.175; x (1 - 0.14).
  d.sample(104);
  EXPECT_NEAR(t.rtt_diff_ns(), 3'500.0, 1e-9);
  EXPECT_NEAR(t.rate(), 4.3 * kG, 1e-3);
  // rtt_diff = 0.125 x 3.5 + 0.875 x 4 = 3.9375 us; g = 0.196875;
  // x (1 - 0.1575) = 0.8425: 3.62275 Gb/s.
  d.sample(108);
  EXPECT_NEAR(t.rtt_diff_ns(), 3'937.5, 1e-9);
  EXPECT_NEAR(t.rate(), 3.62275 * kG, 1e-3);
}

TEST(Timely, NegativeGradientAddsDeltaThenHyperActiveAfterFiveEvents) {
  TimelyControl t(at(5 * kG), ctx10());
  Driver d{t};
  d.sample(200);
  // Falling 4 us per event: g < 0 each time. Events 1..5 add 10 Mb/s, from
  // the 6th on 5 x 10 Mb/s.
  const double expected[] = {5.01, 5.02, 5.03, 5.04, 5.05, 5.10, 5.15};
  uint64_t rtt = 200;
  for (uint32_t i = 0; i < 7; ++i) {
    rtt -= 4;
    d.sample(rtt);
    EXPECT_NEAR(t.rate(), expected[i] * kG, 1e-3) << "event " << i + 1;
    EXPECT_EQ(t.negative_gradient_events(), i + 1);
  }
  // A rise (172 -> 272 us) makes g > 0: a cut, and the count restarts.
  const double before = t.rate();
  d.sample(272);
  EXPECT_LT(t.rate(), before);
  EXPECT_EQ(t.negative_gradient_events(), 0u);
  // Falling again (272 -> 72, new diff -200 us): back to plain delta.
  const double after_cut = t.rate();
  d.sample(72);
  EXPECT_LT(t.rtt_diff_ns(), 0.0);
  EXPECT_NEAR(t.rate(), after_cut + 10 * kM, 1e-3);
  EXPECT_EQ(t.negative_gradient_events(), 1u);
}

TEST(Timely, ASteadyRttIsAZeroGradientAndIncreases) {
  TimelyControl t(at(5 * kG), ctx10());
  Driver d{t};
  for (int i = 0; i < 7; ++i) d.sample(100);  // 6 events with g = 0
  EXPECT_DOUBLE_EQ(t.rtt_diff_ns(), 0.0);
  // 5 x 10 Mb/s, then the 6th event is hyper-active: 5.05 + 0.05.
  EXPECT_NEAR(t.rate(), 5.1 * kG, 1e-3);
}

TEST(Timely, RateStaysBetweenMinRateAndLineRate) {
  TimelyControl t(TimelyParams{}, ctx10());
  Driver d{t};
  d.sample(10);
  d.sample(10);
  EXPECT_EQ(t.rate_bps(), 10'000'000'000u);  // line rate: no further
  // A steep rise: g = 0.875 x 400 / 20 = 17.5, 1 - 14 < 0: the minimum.
  d.sample(410);
  EXPECT_EQ(t.rate_bps(), 100'000'000u);
  // TCD's beta 1.6 far above T_high: 1 - 1.6 (1 - 500 / 5000) < 0.
  TimelyParams p = timely_tcd_params();
  p.min_rate_bps = 50'000'000;
  TimelyControl u(at(5 * kG, p), ctx10());
  Driver e{u};
  e.sample(400);
  e.sample(5'000);
  EXPECT_EQ(u.rate_bps(), 50'000'000u);
  // The initial rate is bounded too.
  EXPECT_EQ(TimelyControl(at(20 * kG), ctx10()).rate_bps(), 10'000'000'000u);
  EXPECT_EQ(TimelyControl(at(1'000), ctx10()).rate_bps(), 100'000'000u);
}

TEST(Timely, UeAwareHoldsTheRateOnAUeMarkedRiseAndCutsOnCe) {
  TimelyControl t(at(5 * kG, timely_tcd_params()), ctx10());
  Driver d{t};
  d.sample(100);
  d.sample(104, /*ue=*/true);  // g = 0.175 > 0 on UE: held
  EXPECT_DOUBLE_EQ(t.rate(), 5 * kG);
  EXPECT_EQ(t.ue_holds(), 1u);
  EXPECT_NEAR(t.rtt_diff_ns(), 3'500.0, 1e-9);  // the RTT state moves on
  // CE: real congestion, beta 1.6. rtt_diff 3.9375 us, g = 0.196875:
  // x (1 - 1.6 x 0.196875) = 0.685: 3.425 Gb/s.
  d.sample(108, /*ue=*/false, /*ce=*/true);
  EXPECT_NEAR(t.rate(), 3.425 * kG, 1e-3);
  // UE and CE on one ACK: CE wins. rtt_diff = 0.125 x 3.9375 + 0.875 x 4
  // = 3.9921875 us, g = 0.199609375, x (1 - 0.319375) = 0.680625.
  d.sample(112, true, true);
  EXPECT_NEAR(t.rate(), 3.425 * 0.680625 * kG, 1e-3);
  EXPECT_EQ(t.ue_holds(), 1u);
}

TEST(Timely, UeAwareLeavesTheOtherBranchesAlone) {
  // Falling RTT on UE: the ordinary increase.
  TimelyControl t(at(5 * kG, timely_tcd_params()), ctx10());
  Driver d{t};
  d.sample(200);
  d.sample(196, true);
  EXPECT_NEAR(t.rate(), 5.01 * kG, 1e-3);
  // Below T_low on UE: the ordinary increase.
  d.sample(40, true);
  EXPECT_NEAR(t.rate(), 5.02 * kG, 1e-3);
  // Above T_high on UE: the text only exempts T_low <= RTT <= T_high, so a
  // cut with beta 1.6: 1 - 1.6 (1 - 500 / 1000) = 0.2.
  d.sample(1'000, true);
  EXPECT_NEAR(t.rate(), 5.02 * 0.2 * kG, 1e-3);
  EXPECT_EQ(t.ue_holds(), 0u);
  // Sluice's option: hold there too.
  TimelyParams p = timely_tcd_params();
  p.ue_hold_above_t_high = true;
  TimelyControl h(at(5 * kG, p), ctx10());
  Driver e{h};
  e.sample(400);
  e.sample(1'000, true);
  EXPECT_DOUBLE_EQ(h.rate(), 5 * kG);
  EXPECT_EQ(h.ue_holds(), 1u);
}

TEST(Timely, WithoutUeAwarenessUeIsIgnored) {
  TimelyControl t(at(5 * kG), ctx10());
  Driver d{t};
  d.sample(100);
  d.sample(104, true);  // cut as in PositiveGradientCutsByBetaTimesTheGradient
  EXPECT_NEAR(t.rate(), 4.3 * kG, 1e-3);
  EXPECT_EQ(t.ue_holds(), 0u);
}

TEST(Timely, CompletionEventsPerChunk) {
  TimelyParams p = at(5 * kG);
  p.completion_bytes = 16'384;
  TimelyControl t(p, ctx10());
  Driver d{t};
  for (int i = 0; i < 16; ++i) d.sample(30);  // snd_una up to 16,000: no event
  EXPECT_EQ(t.events(), 0u);
  d.sample(30);  // 17,000: the first chunk completed; seeds
  EXPECT_EQ(t.events(), 1u);
  EXPECT_DOUBLE_EQ(t.rate(), 5 * kG);
  for (int i = 0; i < 15; ++i) d.sample(40);  // up to 32,000: none
  EXPECT_EQ(t.events(), 1u);
  EXPECT_DOUBLE_EQ(t.rate(), 5 * kG);
  d.sample(40);  // 33,000: the second chunk; below T_low: + delta
  EXPECT_EQ(t.events(), 2u);
  EXPECT_NEAR(t.rate(), 5.01 * kG, 1e-3);
}

TEST(Timely, NackIsACompletionEvent) {
  TimelyControl t(at(5 * kG), ctx10());
  Segment n;
  n.kind = SegmentKind::kNack;
  n.ts_ns = 1'000'000;
  AckInfo i;
  t.on_nack(1'400'000, n, i);  // 400 us: seeds
  n.ts_ns = 2'000'000;
  t.on_nack(3'000'000, n, i);  // 1000 us: x 0.6
  EXPECT_NEAR(t.rate(), 3 * kG, 1e-3);
  // A send time after now is no sample.
  n.ts_ns = 5'000'000;
  t.on_nack(4'000'000, n, i);
  EXPECT_EQ(t.events(), 2u);
}

}  // namespace
}  // namespace sluice
