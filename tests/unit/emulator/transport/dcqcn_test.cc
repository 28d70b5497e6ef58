// DCQCN's reaction point (lib/emulator/transport/dcqcn/dcqcn_control.h) on a
// simulated clock. Expected rates are the paper's formulas worked by hand
// (section 3.1 of "Congestion Control for Large-Scale RDMA Deployments"):
//   cut:       RT = RC, RC = RC (1 - alpha/2), alpha = (1 - g) alpha + g
//   decay:     alpha = (1 - g) alpha per K without a CNP
//   increase:  fast recovery RC = (RT + RC)/2; additive RT += R_AI;
//              hyper RT += i R_HAI; then RC = (RT + RC)/2.
// Line rate 100 Gb/s throughout; g = 1/256.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>

#include "lib/emulator/transport/dcqcn/dcqcn_control.h"
#include "lib/emulator/transport/dcqcn/dcqcn_params.h"
#include "lib/emulator/transport/flow_transport.h"
#include "lib/emulator/transport/segment.h"

namespace sluice {
namespace {

constexpr double kG = 1e9;  // Gb/s in bps

Segment cnp() {
  Segment s;
  s.kind = SegmentKind::kCnp;
  return s;
}

Segment ack_with(bool ue) {
  Segment s;
  s.kind = SegmentKind::kAck;
  s.ue_echo = ue;
  return s;
}

DcqcnControl make(DcqcnParams p = DcqcnParams{}) { return DcqcnControl(p, TransportContext{}); }

TEST(DcqcnParams, DefaultsAreThePapers) {
  DcqcnParams p;
  EXPECT_DOUBLE_EQ(p.g, 1.0 / 256);
  EXPECT_EQ(p.alpha_interval_ns, 55'000u);
  EXPECT_EQ(p.rate_timer_ns, 55'000u);
  EXPECT_EQ(p.byte_counter_bytes, 10'000'000u);
  EXPECT_EQ(p.fast_recovery_stages, 5u);
  EXPECT_EQ(p.rate_ai_bps, 40'000'000u);
  EXPECT_TRUE(p.clamp_target_rate);
  EXPECT_FALSE(p.ue_aware);
}

TEST(Dcqcn, StartsAtLineRateWithNoTimers) {
  auto d = make();
  EXPECT_EQ(d.rate_bps(), 100'000'000'000u);
  EXPECT_EQ(d.window_bytes(), kTransportNever);
  EXPECT_EQ(d.timer_due_ns(), kTransportNever);
  d.on_send(0, 20'000'000);  // no byte-counter events before a cut
  EXPECT_EQ(d.byte_stage(), 0u);
  EXPECT_EQ(d.rate_bps(), 100'000'000'000u);
}

// alpha = 1: RC = 100 (1 - 1/2) = 50 Gb/s, RT = 100; alpha stays
// (255/256) 1 + 1/256 = 1. Timers restart at the cut: both due at +55 us.
TEST(Dcqcn, CnpCutsWithAlpha) {
  auto d = make();
  d.on_cnp(1'000, cnp());
  EXPECT_EQ(d.rate_bps(), 50'000'000'000u);
  EXPECT_DOUBLE_EQ(d.target_rate(), 100 * kG);
  EXPECT_DOUBLE_EQ(d.alpha(), 1.0);
  EXPECT_EQ(d.alpha_due_ns(), 56'000u);
  EXPECT_EQ(d.increase_due_ns(), 56'000u);
  EXPECT_EQ(d.timer_due_ns(), 56'000u);
  EXPECT_EQ(d.cuts(), 1u);
}

// No increases (T = 10 s). Two K periods without a CNP: alpha = (255/256)^2
// = 65025/65536. A CNP then: RC = 50 (1 - 65025/131072) = 50 x 66047/131072
// Gb/s, alpha = (255/256)(65025/65536) + 1/256 = 16646911/16777216; the
// alpha timer restarts at the CNP (175 us), where it decays alpha again.
TEST(Dcqcn, AlphaDecaysByTimerAndTheNextCutUsesIt) {
  DcqcnParams p;
  p.rate_timer_ns = 10'000'000'000;
  auto d = make(p);
  d.on_cnp(1'000, cnp());
  d.on_timer(56'000);
  EXPECT_DOUBLE_EQ(d.alpha(), 255.0 / 256);
  EXPECT_EQ(d.alpha_due_ns(), 111'000u);
  d.on_timer(111'000);
  EXPECT_DOUBLE_EQ(d.alpha(), 65025.0 / 65536);
  EXPECT_EQ(d.rate_bps(), 50'000'000'000u);  // alpha alone moves no rate

  d.on_cnp(120'000, cnp());
  EXPECT_NEAR(d.current_rate(), 50 * kG * 66047.0 / 131072, 1.0);
  EXPECT_DOUBLE_EQ(d.target_rate(), 50 * kG);
  EXPECT_DOUBLE_EQ(d.alpha(), 16646911.0 / 16777216);
  EXPECT_EQ(d.alpha_due_ns(), 175'000u);
  d.on_timer(175'000);
  EXPECT_DOUBLE_EQ(d.alpha(), 255.0 / 256 * 16646911.0 / 16777216);
}

// A late call catches up every elapsed period: three K at once.
TEST(Dcqcn, LateTimerTakesEveryElapsedPeriod) {
  DcqcnParams p;
  p.rate_timer_ns = 10'000'000'000;
  auto d = make(p);
  d.on_cnp(0, cnp());
  d.on_timer(170'000);  // periods end at 55, 110, 165 us
  EXPECT_DOUBLE_EQ(d.alpha(), std::pow(255.0 / 256, 3));
  EXPECT_EQ(d.alpha_due_ns(), 220'000u);
}

// Two CNPs (alpha 1 both times): RT = 50, RC = 25 Gb/s. Five timer events
// halve the gap to RT: 37.5, 43.75, 46.875, 48.4375, 49.21875 (RT stays 50).
// The sixth (t = 6 > F, b = 0) is additive: RT = 50.04,
// RC = (50.04 + 49.21875) / 2 = 49.629375; the seventh: RT = 50.08,
// RC = 49.8546875.
TEST(Dcqcn, FastRecoveryThenAdditiveIncrease) {
  auto d = make();
  d.on_cnp(1'000, cnp());
  d.on_cnp(2'000, cnp());
  EXPECT_DOUBLE_EQ(d.target_rate(), 50 * kG);
  EXPECT_DOUBLE_EQ(d.current_rate(), 25 * kG);
  const double fr[] = {37.5, 43.75, 46.875, 48.4375, 49.21875};
  uint64_t t = 2'000;
  for (double expect : fr) {
    t += 55'000;
    EXPECT_EQ(d.timer_due_ns(), t);
    d.on_timer(t);
    EXPECT_DOUBLE_EQ(d.current_rate(), expect * kG);
    EXPECT_DOUBLE_EQ(d.target_rate(), 50 * kG);
  }
  EXPECT_EQ(d.fast_recoveries(), 5u);
  d.on_timer(t += 55'000);
  EXPECT_NEAR(d.target_rate(), 50.04 * kG, 1e-3);
  EXPECT_NEAR(d.current_rate(), 49.629375 * kG, 1e-3);
  d.on_timer(t += 55'000);
  EXPECT_NEAR(d.target_rate(), 50.08 * kG, 1e-3);
  EXPECT_NEAR(d.current_rate(), 49.8546875 * kG, 1e-3);
  EXPECT_EQ(d.additive_increases(), 2u);
  EXPECT_EQ(d.timer_stage(), 7u);
}

// F = 5, T = 10 us, B = 10 kB, R_AI = 40 Mb/s, R_HAI = 200 Mb/s. After the
// two cuts (RT 50, RC 25) six timer events: five fast recoveries (RC
// 49.21875) and one additive (RT 50.04, RC 49.629375). Then six byte events
// (t = 6): b = 1..5 additive, b = 6 hyper with i = min(6, 6) - 5 = 1:
//   b1: RT 50.08, RC 49.8546875      b2: RT 50.12, RC 49.98734375
//   b3: RT 50.16, RC 50.073671875    b4: RT 50.20, RC 50.1368359375
//   b5: RT 50.24, RC 50.18841796875  b6: RT 50.44, RC 50.314208984375
// timer t = 7: hyper i = 1: RT 50.64, RC 50.4771044921875
// byte b = 7: hyper i = 2:  RT 51.04, RC 50.75855224609375
TEST(Dcqcn, ByteCounterAndTimerTogetherReachHyperIncrease) {
  DcqcnParams p;
  p.rate_timer_ns = 10'000;
  p.byte_counter_bytes = 10'000;
  p.rate_ai_bps = 40'000'000;
  p.rate_hai_bps = 200'000'000;
  auto d = make(p);
  d.on_cnp(1'000, cnp());
  d.on_cnp(2'000, cnp());
  d.on_timer(62'000);  // events at 12, 22, 32, 42, 52, 62 us
  EXPECT_EQ(d.timer_stage(), 6u);
  EXPECT_EQ(d.fast_recoveries(), 5u);
  EXPECT_EQ(d.additive_increases(), 1u);
  EXPECT_NEAR(d.current_rate(), 49.629375 * kG, 1e-3);

  const double rt[] = {50.08, 50.12, 50.16, 50.20, 50.24, 50.44};
  const double rc[] = {49.8546875,    49.98734375,    50.073671875,
                       50.1368359375, 50.18841796875, 50.314208984375};
  for (int b = 0; b < 6; ++b) {
    d.on_send(63'000, 10'000);
    EXPECT_EQ(d.byte_stage(), static_cast<uint32_t>(b + 1));
    EXPECT_NEAR(d.target_rate(), rt[b] * kG, 1e-3);
    EXPECT_NEAR(d.current_rate(), rc[b] * kG, 1e-3);
  }
  EXPECT_EQ(d.additive_increases(), 6u);
  EXPECT_EQ(d.hyper_increases(), 1u);

  d.on_timer(72'000);
  EXPECT_NEAR(d.target_rate(), 50.64 * kG, 1e-3);
  EXPECT_NEAR(d.current_rate(), 50.4771044921875 * kG, 1e-3);
  d.on_send(73'000, 10'000);
  EXPECT_NEAR(d.target_rate(), 51.04 * kG, 1e-3);
  EXPECT_NEAR(d.current_rate(), 50.75855224609375 * kG, 1e-3);
  EXPECT_EQ(d.hyper_increases(), 3u);
}

// B = 10 MB: 9,999,999 bytes after the cut do nothing, the next byte is one
// fast-recovery event: RC = (100 + 50) / 2 = 75 Gb/s.
TEST(Dcqcn, ByteCounterTriggersAnIncrease) {
  DcqcnParams p;
  p.rate_timer_ns = 10'000'000'000;
  auto d = make(p);
  d.on_cnp(0, cnp());
  d.on_send(10, 9'999'999);
  EXPECT_EQ(d.byte_stage(), 0u);
  EXPECT_EQ(d.rate_bps(), 50'000'000'000u);
  d.on_send(20, 1);
  EXPECT_EQ(d.byte_stage(), 1u);
  EXPECT_EQ(d.bytes_counted(), 0u);
  EXPECT_EQ(d.rate_bps(), 75'000'000'000u);
  // A cut resets the count.
  d.on_send(30, 5'000'000);
  d.on_cnp(40, cnp());
  EXPECT_EQ(d.bytes_counted(), 0u);
  EXPECT_EQ(d.byte_stage(), 0u);
}

// min 10 Gb/s: 100 -> 50 -> 25 -> 12.5 -> 6.25, held at 10.
TEST(Dcqcn, NeverCutsBelowTheMinimumRate) {
  DcqcnParams p;
  p.min_rate_bps = 10'000'000'000;
  auto d = make(p);
  for (uint64_t t : {1'000, 2'000, 3'000}) d.on_cnp(t, cnp());
  EXPECT_EQ(d.rate_bps(), 12'500'000'000u);
  d.on_cnp(4'000, cnp());
  EXPECT_EQ(d.rate_bps(), 10'000'000'000u);
  d.on_cnp(5'000, cnp());
  EXPECT_EQ(d.rate_bps(), 10'000'000'000u);
}

// One cut (RT 100, RC 50): the gap halves per event (additive steps are
// clamped at line rate), 50e9 / 2^36 < 1 bps after 36 events: 5 fast
// recoveries and 31 additive. Then the increase timer stops; alpha's runs on.
TEST(Dcqcn, ReturnsToLineRateAndStopsTheIncreaseTimer) {
  auto d = make();
  d.on_cnp(0, cnp());
  int events = 0;
  while (d.increase_due_ns() != kTransportNever && events < 100) {
    d.on_timer(d.increase_due_ns());
    ++events;
  }
  EXPECT_EQ(events, 36);
  EXPECT_EQ(d.fast_recoveries(), 5u);
  EXPECT_EQ(d.additive_increases(), 31u);
  EXPECT_EQ(d.rate_bps(), 100'000'000'000u);
  EXPECT_NE(d.alpha_due_ns(), kTransportNever);
}

// HPCC's ns-3 default (no clamping): a cut right after a cut keeps RT.
// Two CNPs: RT stays 100, RC 25; one fast recovery: (100 + 25) / 2 = 62.5.
TEST(Dcqcn, WithoutClampingBackToBackCutsKeepTheTarget) {
  DcqcnParams p;
  p.clamp_target_rate = false;
  auto d = make(p);
  d.on_cnp(1'000, cnp());
  d.on_cnp(2'000, cnp());
  EXPECT_DOUBLE_EQ(d.target_rate(), 100 * kG);
  EXPECT_DOUBLE_EQ(d.current_rate(), 25 * kG);
  d.on_timer(57'000);
  EXPECT_DOUBLE_EQ(d.current_rate(), 62.5 * kG);
  // After an increase event the next cut does clamp: RT = 62.5.
  d.on_cnp(60'000, cnp());
  EXPECT_DOUBLE_EQ(d.target_rate(), 62.5 * kG);
}

// ------------------------------------------------------------ UE-aware

// Cut to 50; a UE-echoing ACK holds the rate: the event at 56 us changes
// nothing and counts no stage; an ACK without UE releases it, and the event
// at 111 us is the first fast recovery: (100 + 50) / 2 = 75.
TEST(DcqcnUeAware, UeHoldsTheRate) {
  DcqcnParams p;
  p.ue_aware = true;
  auto d = make(p);
  d.on_cnp(1'000, cnp());
  d.on_ack(2'000, ack_with(true), AckInfo{});
  EXPECT_TRUE(d.ue_held());
  d.on_timer(56'000);
  EXPECT_EQ(d.rate_bps(), 50'000'000'000u);
  EXPECT_DOUBLE_EQ(d.target_rate(), 100 * kG);
  EXPECT_EQ(d.timer_stage(), 0u);
  EXPECT_EQ(d.held_events(), 1u);
  EXPECT_EQ(d.increase_due_ns(), 111'000u);
  // Bytes sent while held do not count.
  d.on_send(57'000, 20'000'000);
  EXPECT_EQ(d.byte_stage(), 0u);
  EXPECT_EQ(d.bytes_counted(), 0u);

  d.on_ack(60'000, ack_with(false), AckInfo{});
  EXPECT_FALSE(d.ue_held());
  d.on_timer(111'000);
  EXPECT_EQ(d.rate_bps(), 75'000'000'000u);
  EXPECT_EQ(d.timer_stage(), 1u);
}

TEST(DcqcnUeAware, UeAloneNeverCuts) {
  DcqcnParams p;
  p.ue_aware = true;
  auto d = make(p);
  for (uint64_t t = 0; t < 10; ++t) d.on_ack(t * 1'000, ack_with(true), AckInfo{});
  Segment nack = ack_with(true);
  nack.kind = SegmentKind::kNack;
  d.on_nack(20'000, nack, AckInfo{});
  EXPECT_EQ(d.rate_bps(), 100'000'000'000u);
  EXPECT_EQ(d.timer_due_ns(), kTransportNever);
}

// CE still cuts while UE holds: 50 -> 25.
TEST(DcqcnUeAware, CeCutsWhileHeld) {
  DcqcnParams p;
  p.ue_aware = true;
  auto d = make(p);
  d.on_cnp(1'000, cnp());
  d.on_ack(2'000, ack_with(true), AckInfo{});
  d.on_cnp(3'000, cnp());
  EXPECT_EQ(d.rate_bps(), 25'000'000'000u);
  EXPECT_DOUBLE_EQ(d.target_rate(), 50 * kG);
}

TEST(DcqcnUeAware, PlainDcqcnIgnoresUe) {
  auto d = make();
  d.on_cnp(1'000, cnp());
  d.on_ack(2'000, ack_with(true), AckInfo{});
  EXPECT_FALSE(d.ue_held());
  d.on_timer(56'000);
  EXPECT_EQ(d.rate_bps(), 75'000'000'000u);
}

}  // namespace
}  // namespace sluice
