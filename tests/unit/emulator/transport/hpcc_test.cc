// HPCC's sender reaction (Li et al., SIGCOMM 2019, section 3, Algorithm 1)
// against values worked by hand. Unless a test says otherwise: a 100 Gb/s
// NIC, T = 8 us, so W_init = BDP = 100 Gb/s x 8 us = 100,000 B; eta = 0.95,
// maxStage = 5, N = 125, so W_AI = 100,000 x 0.05 / 125 = 40 B. A 100 Gb/s
// hop moves B = 12.5 B/ns, B T = 100,000 B.
#include "lib/emulator/transport/hpcc/hpcc_control.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <initializer_list>

namespace sluice {
namespace {

constexpr uint32_t k100G = 100'000;  // Mb/s
constexpr uint32_t k25G = 25'000;

TransportContext ctx100() {
  TransportContext c;
  c.link_rate_bps = 100'000'000'000;
  c.base_rtt_ns = 8'000;
  return c;
}

Segment ack_with(uint64_t seq, std::initializer_list<IntHop> hops) {
  Segment s;
  s.kind = SegmentKind::kAck;
  s.seq = seq;
  for (const IntHop& h : hops) s.hops[s.int_hops++] = h;
  return s;
}

IntHop hop(uint64_t ts, uint64_t tx, uint32_t qlen, uint32_t rate_mbps = k100G) {
  IntHop h;
  h.ts_ns = ts;
  h.tx_bytes = tx;
  h.qlen_bytes = qlen;
  h.rate_mbps = rate_mbps;
  return h;
}

AckInfo info(uint64_t snd_una, uint64_t snd_nxt) {
  AckInfo i;
  i.acked_bytes = 1000;
  i.snd_una = snd_una;
  i.snd_nxt = snd_nxt;
  return i;
}

TEST(Hpcc, StartsAtBdpAndLineRateWithTheDerivedWai) {
  HpccControl h(HpccParams{}, ctx100());
  EXPECT_EQ(h.base_rtt_ns(), 8'000u);
  EXPECT_DOUBLE_EQ(h.window(), 100'000.0);
  EXPECT_DOUBLE_EQ(h.reference_window(), 100'000.0);
  EXPECT_NEAR(h.w_ai(), 40.0, 1e-9);
  EXPECT_EQ(h.window_bytes(), 100'000u);
  EXPECT_EQ(h.rate_bps(), 100'000'000'000u);
  // T from the parameters overrides the context's: 100 Gb/s x 10 us.
  HpccParams p;
  p.base_rtt_ns = 10'000;
  HpccControl h2(p, ctx100());
  EXPECT_EQ(h2.window_bytes(), 125'000u);
  EXPECT_EQ(h2.rate_bps(), 100'000'000'000u);
  // An explicit W_AI is taken as is.
  p.w_ai_bytes = 80;
  EXPECT_DOUBLE_EQ(HpccControl(p, ctx100()).w_ai(), 80.0);
}

TEST(Hpcc, FirstAckOnlyRecordsTheHops) {
  HpccControl h(HpccParams{}, ctx100());
  h.on_ack(10'000, ack_with(1'000, {hop(1'000, 0, 90'000)}), info(1'000, 10'000));
  EXPECT_DOUBLE_EQ(h.window(), 100'000.0);
  EXPECT_DOUBLE_EQ(h.utilization(), 1.0);
  EXPECT_EQ(h.last_update_seq(), 10'000u);
  // An ACK without INT changes nothing.
  h.on_ack(10'100, ack_with(1'500, {}), info(1'500, 10'000));
  EXPECT_DOUBLE_EQ(h.window(), 100'000.0);
}

TEST(Hpcc, UtilizationFromTwoSamplesOnOneHop) {
  HpccControl h(HpccParams{}, ctx100());
  h.on_ack(10'000, ack_with(1'000, {hop(1'000, 0, 30'000)}), info(1'000, 10'000));
  // dt = 8000 ns = T; 80,000 B in 8000 ns = 10 B/ns = 0.8 B;
  // queue min(30,000, 20,000) = 20,000 B = 0.2 B T. u = 1.0, tau = T: U = 1.0.
  // Per ACK (seq 2000 <= 10,000): W = Wc / (1.0 / 0.95) + 40 = 95,040; Wc stays.
  h.on_ack(18'000, ack_with(2'000, {hop(9'000, 80'000, 20'000)}), info(2'000, 10'000));
  EXPECT_NEAR(h.utilization(), 1.0, 1e-12);
  EXPECT_NEAR(h.window(), 95'040.0, 1e-6);
  EXPECT_DOUBLE_EQ(h.reference_window(), 100'000.0);
  EXPECT_EQ(h.inc_stage(), 0u);
  EXPECT_EQ(h.window_bytes(), 95'040u);
  EXPECT_EQ(h.rate_bps(), 95'040'000'000u);  // 95,040 B / 8 us
}

TEST(Hpcc, QueueTermOfTheNewerSampleWhenMinQlenIsOff) {
  HpccParams p;
  p.min_qlen = false;
  HpccControl h(p, ctx100());
  h.on_ack(10'000, ack_with(1'000, {hop(1'000, 0, 0)}), info(1'000, 10'000));
  // 0.8 + 20,000 / 100,000 = 1.0 (with min_qlen it would be 0.8).
  h.on_ack(18'000, ack_with(2'000, {hop(9'000, 80'000, 20'000)}), info(2'000, 10'000));
  EXPECT_NEAR(h.utilization(), 1.0, 1e-12);
}

TEST(Hpcc, UtilizationIsTheMostLoadedOfTwoHops) {
  HpccControl h(HpccParams{}, ctx100());
  h.on_ack(10'000, ack_with(1'000, {hop(1'000, 0, 5'000, k25G), hop(1'500, 0, 90'000)}),
           info(1'000, 10'000));
  // Hop 0, 25 Gb/s (B = 3.125 B/ns, B T = 25,000 B): 12,500 B in 8000 ns
  //   = 1.5625 B/ns = 0.5 B; queue 5,000 = 0.2 B T; u = 0.7.
  // Hop 1, 100 Gb/s: 100,000 B in 8000 ns = 12.5 B/ns = 1.0 B;
  //   queue min(90,000, 95,000) = 0.9 B T; u = 1.9, tau = 8000 = T.
  // U = 1.9: W = 100,000 x 0.95 / 1.9 + 40 = 50,040.
  h.on_ack(18'000, ack_with(2'000, {hop(9'000, 12'500, 5'000, k25G), hop(9'500, 100'000, 95'000)}),
           info(2'000, 10'000));
  EXPECT_NEAR(h.utilization(), 1.9, 1e-12);
  EXPECT_NEAR(h.window(), 50'040.0, 1e-6);
}

TEST(Hpcc, EwmaWeighsTheMostLoadedHopsIntervalOverT) {
  HpccControl h(HpccParams{}, ctx100());
  h.on_ack(10'000, ack_with(1'000, {hop(1'000, 0, 0), hop(1'000, 0, 0)}), info(1'000, 10'000));
  // Hop 0: 50,000 B in 8000 ns = 0.5, no queue: u = 0.5, dt 8000.
  // Hop 1: 25,000 B in 2000 ns = 1.0, no queue: u = 1.0, dt 2000.
  // tau = 2000 (hop 1's): U = (1 - 0.25) x 1 (initial) + 0.25 x 1.0 = 1.0.
  h.on_ack(10'500, ack_with(1'500, {hop(9'000, 50'000, 0), hop(3'000, 25'000, 0)}),
           info(1'500, 10'000));
  EXPECT_NEAR(h.utilization(), 1.0, 1e-12);
  // Hop 0: no newer record (same ts): skipped, kept. Hop 1: 2,500 B in
  // 1000 ns = 0.2, u = 0.2, tau = 1000: U = 0.875 x 1.0 + 0.125 x 0.2 = 0.9.
  h.on_ack(10'600, ack_with(1'600, {hop(9'000, 50'000, 0), hop(4'000, 27'500, 0)}),
           info(1'600, 10'000));
  EXPECT_NEAR(h.utilization(), 0.9, 1e-12);
  // A sample longer than T counts as T: hop 1 over 16,000 ns at 0.5 -> U = 0.5.
  h.on_ack(20'000, ack_with(1'700, {hop(9'000, 50'000, 0), hop(20'000, 127'500, 0)}),
           info(1'700, 10'000));
  EXPECT_NEAR(h.utilization(), 0.5, 1e-12);
}

TEST(Hpcc, MultiplicativeThenAdditiveWithIncStageAndReferenceOncePerRtt) {
  HpccControl h(HpccParams{}, ctx100());
  h.on_ack(10'000, ack_with(1'000, {hop(0, 0, 90'000)}), info(1'000, 10'000));
  // Per RTT (11,000 > 10,000): U = 1.9 -> W = Wc = 50,040, incStage 0,
  // lastUpdateSeq = snd_nxt = 20,000.
  h.on_ack(20'000, ack_with(11'000, {hop(8'000, 100'000, 95'000)}), info(11'000, 20'000));
  EXPECT_NEAR(h.window(), 50'040.0, 1e-6);
  EXPECT_NEAR(h.reference_window(), 50'040.0, 1e-6);
  EXPECT_EQ(h.inc_stage(), 0u);
  EXPECT_EQ(h.last_update_seq(), 20'000u);
  // Per ACK (12,000 <= 20,000), U = 0.5 (50,000 B in T, no queue):
  // additive from Wc: W = 50,080; Wc and incStage unchanged.
  h.on_ack(28'000, ack_with(12'000, {hop(16'000, 150'000, 0)}), info(12'000, 20'000));
  EXPECT_NEAR(h.utilization(), 0.5, 1e-12);
  EXPECT_NEAR(h.window(), 50'080.0, 1e-6);
  EXPECT_NEAR(h.reference_window(), 50'040.0, 1e-6);
  EXPECT_EQ(h.inc_stage(), 0u);
  // Another per-ACK step starts from the same Wc: W stays 50,080.
  h.on_ack(36'000, ack_with(13'000, {hop(24'000, 200'000, 0)}), info(13'000, 20'000));
  EXPECT_NEAR(h.window(), 50'080.0, 1e-6);
  // Per-RTT additive steps at U = 0.5: Wc = 50,080 .. 50,240, incStage 1..5.
  uint64_t ts = 24'000, tx = 200'000, seq = 20'000;
  for (uint32_t stage = 1; stage <= 5; ++stage) {
    ts += 8'000;
    tx += 50'000;
    seq += 10'000;
    h.on_ack(ts + 10'000, ack_with(seq + 1, {hop(ts, tx, 0)}), info(seq + 1, seq + 10'000));
    EXPECT_EQ(h.inc_stage(), stage);
    EXPECT_NEAR(h.reference_window(), 50'040.0 + 40.0 * stage, 1e-6);
    EXPECT_EQ(h.last_update_seq(), seq + 10'000);
  }
  // incStage = maxStage: multiplicative although U = 0.5 < eta:
  // W = 50,240 x 0.95 / 0.5 + 40 = 95,456 + 40 = 95,496; incStage back to 0.
  ts += 8'000;
  tx += 50'000;
  seq += 10'000;
  h.on_ack(ts + 10'000, ack_with(seq + 1, {hop(ts, tx, 0)}), info(seq + 1, seq + 10'000));
  EXPECT_NEAR(h.window(), 95'496.0, 1e-6);
  EXPECT_NEAR(h.reference_window(), 95'496.0, 1e-6);
  EXPECT_EQ(h.inc_stage(), 0u);
}

TEST(Hpcc, MaxStageZeroIsAlwaysMultiplicative) {
  HpccParams p;
  p.max_stage = 0;  // HPCC's ns-3 run script default (MI_THRESH 0)
  HpccControl h(p, ctx100());
  h.on_ack(10'000, ack_with(1'000, {hop(0, 0, 90'000)}), info(1'000, 10'000));
  h.on_ack(20'000, ack_with(11'000, {hop(8'000, 100'000, 95'000)}), info(11'000, 20'000));
  ASSERT_NEAR(h.reference_window(), 50'040.0, 1e-6);
  // U = 0.5 per RTT: W = 50,040 x 0.95 / 0.5 + 40 = 95,076 + 40 = 95,116.
  h.on_ack(30'000, ack_with(21'000, {hop(16'000, 150'000, 0)}), info(21'000, 30'000));
  EXPECT_NEAR(h.window(), 95'116.0, 1e-6);
  EXPECT_EQ(h.inc_stage(), 0u);
}

TEST(Hpcc, WindowAndRateStayWithinMinRateAndLineRate) {
  HpccParams p;
  p.min_rate_bps = 1'000'000'000;  // W_min = 1 Gb/s x 8 us = 1,000 B
  HpccControl h(p, ctx100());
  EXPECT_NEAR(h.min_window(), 1'000.0, 1e-9);
  h.on_ack(10'000, ack_with(1'000, {hop(0, 0, 100'000'000)}), info(1'000, 10'000));
  // u = 1.0 + 100,000,000 / 100,000 = 1001: W = 100,000 x 0.95 / 1001 + 40
  // = 134.9 B < 1,000 B: W = 1,000, rate = 1 Gb/s.
  h.on_ack(20'000, ack_with(11'000, {hop(8'000, 100'000, 100'000'000)}), info(11'000, 20'000));
  EXPECT_NEAR(h.utilization(), 1001.0, 1e-9);
  EXPECT_DOUBLE_EQ(h.window(), 1'000.0);
  EXPECT_EQ(h.window_bytes(), 1'000u);
  EXPECT_EQ(h.rate_bps(), 1'000'000'000u);
  // An idle path (U = 0) on a multiplicative step: the cap, line rate.
  HpccParams q;
  q.max_stage = 0;
  HpccControl idle(q, ctx100());
  idle.on_ack(10'000, ack_with(1'000, {hop(0, 0, 0)}), info(1'000, 10'000));
  idle.on_ack(20'000, ack_with(11'000, {hop(8'000, 0, 0)}), info(11'000, 20'000));
  EXPECT_DOUBLE_EQ(idle.utilization(), 0.0);
  EXPECT_DOUBLE_EQ(idle.window(), 100'000.0);
  EXPECT_EQ(idle.rate_bps(), 100'000'000'000u);
  // Additive steps stop at W_init.
  HpccControl add(HpccParams{}, ctx100());
  add.on_ack(10'000, ack_with(1'000, {hop(0, 0, 0)}), info(1'000, 10'000));
  add.on_ack(20'000, ack_with(11'000, {hop(8'000, 50'000, 0)}), info(11'000, 20'000));
  EXPECT_DOUBLE_EQ(add.window(), 100'000.0);
  EXPECT_EQ(add.inc_stage(), 1u);
}

TEST(Hpcc, PathChangeRestartsTheSamples) {
  HpccControl h(HpccParams{}, ctx100());
  h.on_ack(10'000, ack_with(1'000, {hop(0, 0, 0)}), info(1'000, 10'000));
  // Two hops now: only recorded, nothing computed.
  h.on_ack(11'000, ack_with(2'000, {hop(500, 7'000'000, 0), hop(600, 9'000'000, 0)}),
           info(2'000, 10'000));
  EXPECT_DOUBLE_EQ(h.utilization(), 1.0);
  EXPECT_DOUBLE_EQ(h.window(), 100'000.0);
  // The next two-hop ACK measures against the two-hop records: hop 0
  // 50,000 B in 8000 ns = 0.5, hop 1 25,000 B in 8000 ns = 0.25: U = 0.5;
  // per ACK, additive: W = min(100,000 + 40, W_init).
  h.on_ack(19'000, ack_with(3'000, {hop(8'500, 7'050'000, 0), hop(8'600, 9'025'000, 0)}),
           info(3'000, 10'000));
  EXPECT_NEAR(h.utilization(), 0.5, 1e-12);
  EXPECT_DOUBLE_EQ(h.window(), 100'000.0);
}

TEST(Hpcc, RecordsWrappedAtTwoToThe32AreMeasuredModulo) {
  // The wire carries a record's ts and tx_bytes modulo 2^32.
  HpccControl h(HpccParams{}, ctx100());
  const uint64_t m = uint64_t{1} << 32;
  h.on_ack(10'000, ack_with(1'000, {hop(m - 3'000, m - 30'000, 20'000)}), info(1'000, 10'000));
  // ts 5000 after the wrap: dt = 8000; tx 50,000 after it: 80,000 B. u = 1.0.
  h.on_ack(18'000, ack_with(2'000, {hop(5'000, 50'000, 20'000)}), info(2'000, 10'000));
  EXPECT_NEAR(h.utilization(), 1.0, 1e-12);
  EXPECT_NEAR(h.window(), 95'040.0, 1e-6);
}

TEST(Hpcc, AnOlderRecordIsSkippedAndTheNewerKept) {
  HpccControl h(HpccParams{}, ctx100());
  h.on_ack(10'000, ack_with(1'000, {hop(9'000, 80'000, 0)}), info(1'000, 10'000));
  // Older than the last record: nothing measured, nothing changed.
  h.on_ack(11'000, ack_with(1'500, {hop(1'000, 0, 0)}), info(1'500, 10'000));
  EXPECT_DOUBLE_EQ(h.utilization(), 1.0);
  EXPECT_DOUBLE_EQ(h.window(), 100'000.0);
  // Measured against ts 9000: 25,000 B in 8000 ns = 0.25, tau = T: U = 0.25.
  h.on_ack(19'000, ack_with(2'000, {hop(17'000, 105'000, 0)}), info(2'000, 10'000));
  EXPECT_NEAR(h.utilization(), 0.25, 1e-12);
}

TEST(Hpcc, NackIsTakenLikeAnAck) {
  HpccControl h(HpccParams{}, ctx100());
  h.on_ack(10'000, ack_with(1'000, {hop(0, 0, 90'000)}), info(1'000, 10'000));
  // The NACK's seq passes lastUpdateSeq: a per-RTT update with U = 1.9, and
  // lastUpdateSeq becomes the rewound snd_nxt (= snd_una after go-back-N).
  Segment nack = ack_with(11'000, {hop(8'000, 100'000, 95'000)});
  nack.kind = SegmentKind::kNack;
  h.on_nack(20'000, nack, info(11'000, 11'000));
  EXPECT_NEAR(h.window(), 50'040.0, 1e-6);
  EXPECT_NEAR(h.reference_window(), 50'040.0, 1e-6);
  EXPECT_EQ(h.last_update_seq(), 11'000u);
}

// A single flow alone on one 100 Gb/s bottleneck, one INT sample per RTT
// spanning exactly T: with window W in flight the hop sends min(W, BDP) per
// T and queues max(0, W - BDP), so u = W / BDP. Algorithm 1's fixed point is
// W = W eta / (W / BDP) + W_AI = eta BDP + W_AI = 95,040 B.
TEST(Hpcc, ClosedLoopConvergesToEtaBdpPlusWai) {
  HpccControl h(HpccParams{}, ctx100());
  uint64_t ts = 0, tx = 0, seq = 1'000;
  uint32_t q = 0;
  h.on_ack(ts + 8'000, ack_with(seq, {hop(ts, tx, q)}), info(seq, seq + 1));
  auto rtt = [&] {
    const double w = h.window();
    const double bdp = 100'000.0;
    ts += 8'000;
    tx += static_cast<uint64_t>(std::llround(w < bdp ? w : bdp));
    q = static_cast<uint32_t>(std::llround(w > bdp ? w - bdp : 0));
    seq += 10'000;
    h.on_ack(ts + 8'000, ack_with(seq, {hop(ts, tx, q)}), info(seq, seq + 1));
  };
  // W = 100,000: u = 1.0 -> W = 95,000 + 40 = 95,040.
  rtt();
  EXPECT_NEAR(h.window(), 95'040.0, 1e-6);
  // u = 0.9504 >= eta -> W = 95,040 x 0.95 / 0.9504 + 40 = 95,040 again.
  for (int i = 0; i < 20; ++i) {
    rtt();
    EXPECT_NEAR(h.window(), 95'040.0, 1e-6);
    EXPECT_EQ(h.inc_stage(), 0u);
  }
  EXPECT_EQ(h.rate_bps(), 95'040'000'000u);
}

TEST(Hpcc, ClosedLoopFromASmallWindowClimbsThenJumpsToEtaBdp) {
  HpccControl h(HpccParams{}, ctx100());
  uint64_t ts = 0, tx = 0, seq = 1'000;
  h.on_ack(8'000, ack_with(seq, {hop(ts, tx, 90'000)}), info(seq, seq + 1));
  // U = 1.9 (as above): W = 50,040.
  ts += 8'000;
  tx += 100'000;
  seq += 10'000;
  h.on_ack(ts + 8'000, ack_with(seq, {hop(ts, tx, 95'000)}), info(seq, seq + 1));
  ASSERT_NEAR(h.window(), 50'040.0, 1e-6);
  // Then u = W / BDP < eta: five additive RTTs 50,080 .. 50,240, then the
  // forced multiplicative one: 50,240 x 0.95 / 0.5024 + 40 = 95,040.
  const double expected[] = {50'080, 50'120, 50'160, 50'200, 50'240, 95'040, 95'040};
  for (double e : expected) {
    const double w = h.window();
    ts += 8'000;
    tx += static_cast<uint64_t>(std::llround(w));
    seq += 10'000;
    h.on_ack(ts + 8'000, ack_with(seq, {hop(ts, tx, 0)}), info(seq, seq + 1));
    EXPECT_NEAR(h.window(), e, 1e-6);
  }
}

}  // namespace
}  // namespace sluice
