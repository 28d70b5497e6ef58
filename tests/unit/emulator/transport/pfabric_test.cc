// pFabric's hosts (lib/emulator/transport/pfabric/) against "pFabric: Minimal
// Near-Optimal Datacenter Transport", section 4.2: line-rate start with one
// BDP, a fixed RTO, the window on a timeout, no fast retransmit, SACKs,
// probe mode after consecutive timeouts; the rank each data segment carries
// (section 4); the receiver's ACKs. Time is simulated; expected values are
// worked out in the comments.
#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <vector>

#include "lib/emulator/transport/pfabric/pfabric_receiver.h"
#include "lib/emulator/transport/pfabric/pfabric_sender.h"

namespace sluice {
namespace {

// 100 Gb/s, 8 us: one BDP is 100,000 bytes (100 segments), the RTO 24 us.
TransportContext context() {
  TransportContext ctx;
  ctx.link_rate_bps = 100'000'000'000;
  ctx.max_payload = 1000;
  ctx.base_rtt_ns = 8'000;
  return ctx;
}

FlowSpec flow(uint64_t bytes, uint64_t start_ns = 0) {
  FlowSpec f;
  f.id = 7;
  f.bytes = bytes;
  f.start_ns = start_ns;
  return f;
}

Segment ack(uint64_t seq, uint64_t ts_ns = 0) {
  Segment s;
  s.kind = SegmentKind::kAck;
  s.flow = 7;
  s.seq = seq;
  s.ts_ns = ts_ns;
  s.has_rank = true;
  return s;
}

Segment sack(uint64_t seq, uint64_t start, uint64_t end) {
  Segment s = ack(seq);
  s.has_sack = true;
  s.sack_start = start;
  s.sack_end = end;
  return s;
}

Segment data(uint64_t seq, uint32_t bytes, uint64_t ts_ns = 0) {
  Segment s;
  s.kind = SegmentKind::kData;
  s.flow = 7;
  s.seq = seq;
  s.bytes = bytes;
  s.ts_ns = ts_ns;
  return s;
}

std::vector<Segment> send_all(PfabricSender& tx, uint64_t now_ns) {
  std::vector<Segment> out;
  Segment s;
  while (tx.send(now_ns, &s)) out.push_back(s);
  return out;
}

// Sender and receiver joined by a fixed one-way delay each way; the sender's
// NIC puts out one segment per `gap_ns` (88 ns: a 1000-B segment's frame at
// 100 Gb/s, rounded). `drop` loses data segments by (seq, transmission).
struct Loop {
  Loop(PfabricSender* sender, PfabricReceiver* receiver) : tx(sender), rx(receiver) {}
  PfabricSender* tx;
  PfabricReceiver* rx;
  uint64_t one_way_ns = 4'000;
  uint64_t gap_ns = 88;
  std::function<bool(const Segment&, int)> drop = [](const Segment&, int) { return false; };
  std::multimap<uint64_t, Segment> to_rx, to_tx;
  std::map<uint64_t, int> transmissions;  // by seq
  uint64_t now = 0;
  uint64_t nic_free = 0;
  std::vector<std::pair<uint64_t, Segment>> sent;

  void run(uint64_t until_ns) {
    for (int guard = 0; guard < 1'000'000; ++guard) {
      uint64_t t = kTransportNever;
      if (!to_rx.empty()) t = std::min(t, to_rx.begin()->first);
      if (!to_tx.empty()) t = std::min(t, to_tx.begin()->first);
      t = std::min(t, tx->timer_due_ns());
      const uint64_t due = tx->send_due_ns();
      if (due != kTransportNever) t = std::min(t, std::max({due, nic_free, now}));
      if (t == kTransportNever || t > until_ns) return;
      now = t;
      Segment reply[FlowReceiver::kMaxReplies];
      if (!to_rx.empty() && to_rx.begin()->first == t) {
        const Segment d = to_rx.begin()->second;
        to_rx.erase(to_rx.begin());
        const uint32_t n = rx->receive(t, d, reply);
        for (uint32_t i = 0; i < n; ++i) to_tx.emplace(t + one_way_ns, reply[i]);
      } else if (!to_tx.empty() && to_tx.begin()->first == t) {
        const Segment a = to_tx.begin()->second;
        to_tx.erase(to_tx.begin());
        tx->receive(t, a);
      } else if (tx->timer_due_ns() == t) {
        tx->on_timer(t);
      } else {
        Segment s;
        ASSERT_TRUE(tx->send(t, &s)) << "send_due_ns promised a segment at " << t;
        sent.emplace_back(t, s);
        nic_free = t + gap_ns;
        if (drop(s, transmissions[s.seq]++)) continue;
        to_rx.emplace(t + one_way_ns, s);
      }
    }
    FAIL() << "loop did not settle";
  }
};

// ---------------------------------------------------------------- sender

TEST(PfabricSender, StartsWithOneBdpAtOnceEachSegmentRankedByTheFlowsRemainingBytes) {
  PfabricSender tx(PfabricParams{}, context(), flow(1'000'000));
  EXPECT_EQ(tx.window_bytes(), 100'000u);  // 100 Gb/s x 8 us
  EXPECT_EQ(tx.rto_ns(), 24'000u);         // 3 x 8 us
  EXPECT_EQ(tx.send_due_ns(), 0u);
  const std::vector<Segment> s = send_all(tx, 0);
  ASSERT_EQ(s.size(), 100u);  // the whole window now: the NIC sends it at line rate
  for (size_t i = 0; i < s.size(); ++i) {
    EXPECT_EQ(s[i].seq, i * 1000);
    EXPECT_EQ(s[i].bytes, 1000u);
    EXPECT_TRUE(s[i].has_rank);
    EXPECT_EQ(s[i].rank, 1'000'000u);  // nothing acknowledged yet
    EXPECT_EQ(s[i].kind, SegmentKind::kData);
  }
  EXPECT_EQ(tx.send_due_ns(), kTransportNever);  // window full
  EXPECT_EQ(tx.rate_bps(), 0u);
}

TEST(PfabricSender, LineRateStartInTheLoop) {
  PfabricSender tx(PfabricParams{}, context(), flow(1'000'000));
  PfabricReceiver rx(context(), flow(1'000'000));
  Loop loop(&tx, &rx);
  loop.run(8'000);
  // Before the first ACK (8088 ns) the window's 100 segments leave one per
  // NIC gap: 0, 88, ..., 8712 would be the 100th, beyond 8000: 91 by then.
  ASSERT_EQ(loop.sent.size(), 91u);
  for (size_t i = 0; i < loop.sent.size(); ++i) EXPECT_EQ(loop.sent[i].first, i * 88);
}

TEST(PfabricSender, DefaultsScaleWithTheFabricAndConfiguredValuesWin) {
  TransportContext ctx = context();
  ctx.link_rate_bps = 10'000'000'000;
  ctx.base_rtt_ns = 14'400;
  PfabricSender a(PfabricParams{}, ctx, flow(1'000'000));
  EXPECT_EQ(a.window_bytes(), 18'000u);  // 10 Gb/s x 14.4 us
  EXPECT_EQ(a.rto_ns(), 43'200u);        // 3 x 14.4 us
  PfabricParams p;
  p.init_window_bytes = 12'000;
  p.rto_ns = 45'000;
  PfabricSender b(p, ctx, flow(1'000'000));
  EXPECT_EQ(b.window_bytes(), 12'000u);
  EXPECT_EQ(b.rto_ns(), 45'000u);
  // A tiny BDP still allows a segment; a cap below the first window holds it.
  ctx.base_rtt_ns = 100;
  EXPECT_EQ(PfabricSender(PfabricParams{}, ctx, flow(10'000)).window_bytes(), 1000u);
  p.max_window_bytes = 5'000;
  EXPECT_EQ(PfabricSender(p, ctx, flow(10'000)).window_bytes(), 5'000u);
}

TEST(PfabricSender, RankIsTheBytesNotYetAcknowledged) {
  PfabricParams p;
  p.init_window_bytes = 5'000;
  PfabricSender tx(p, context(), flow(20'500));
  ASSERT_EQ(send_all(tx, 0).size(), 5u);
  EXPECT_EQ(tx.rank(), 20'500u);
  tx.receive(8'000, ack(2'000));  // two segments acknowledged
  EXPECT_EQ(tx.rank(), 18'500u);
  tx.receive(8'100, sack(2'000, 3'000, 4'000));  // one more by SACK
  EXPECT_EQ(tx.rank(), 17'500u);
  const std::vector<Segment> s = send_all(tx, 8'100);
  ASSERT_FALSE(s.empty());
  EXPECT_EQ(s[0].rank, 17'500u);
  // A short last segment sent again once everything else is acknowledged
  // ranks as its own 500 bytes.
  p.init_window_bytes = 3'000;
  PfabricSender two(p, context(), flow(2'500));
  for (const Segment& x : send_all(two, 0)) EXPECT_EQ(x.rank, 2'500u);
  two.receive(8'000, ack(2'000));
  two.on_timer(two.timer_due_ns());
  Segment last;
  ASSERT_TRUE(two.send(two.timer_due_ns() - 24'000, &last));
  EXPECT_EQ(last.seq, 2'000u);
  EXPECT_EQ(last.bytes, 500u);
  EXPECT_EQ(last.rank, 500u);
}

TEST(PfabricSender, EachAckGrowsTheWindowAsTcpDoes) {
  PfabricParams p;
  p.init_window_bytes = 10'000;
  PfabricSender tx(p, context(), flow(1'000'000));
  send_all(tx, 0);
  tx.receive(8'000, ack(1'000));
  EXPECT_EQ(tx.cwnd_bytes(), 11'000u);  // slow start: one segment per segment acked
  tx.receive(8'100, ack(3'000));
  EXPECT_EQ(tx.cwnd_bytes(), 12'000u);  // at most one segment per ACK (RFC 5681 3.1)
  EXPECT_EQ(tx.counters().fast_retransmits, 0u);
}

TEST(PfabricSender, WindowNeverPassesTheCap) {
  PfabricParams p;
  p.init_window_bytes = 10'000;
  p.max_window_bytes = 12'000;
  PfabricSender tx(p, context(), flow(1'000'000));
  send_all(tx, 0);
  for (uint64_t a = 1; a <= 5; ++a) tx.receive(8'000 + a, ack(a * 1000));
  EXPECT_EQ(tx.cwnd_bytes(), 12'000u);
}

TEST(PfabricSender, DuplicateAcksDoNotRetransmit) {
  PfabricParams p;
  p.init_window_bytes = 10'000;
  PfabricSender tx(p, context(), flow(100'000));
  send_all(tx, 0);
  tx.receive(8'000, ack(1'000));  // segment 1 lost: the window slides by one
  ASSERT_EQ(send_all(tx, 8'000).size(), 2u);
  for (int i = 0; i < 10; ++i) tx.receive(8'100 + i, ack(1'000));
  // No fast retransmit: nothing goes until the timer.
  EXPECT_EQ(tx.send_due_ns(), kTransportNever);
  EXPECT_EQ(tx.counters().fast_retransmits, 0u);
  EXPECT_EQ(tx.counters().retransmitted, 0u);
  EXPECT_EQ(tx.timer_due_ns(), 8'000u + 24'000);  // restarted by the last progress
}

// The RTO is fixed: it fires rto after the first send (or the last
// progress), and again exactly rto later, with no backoff.
TEST(PfabricSender, RtoFiresAtItsFixedValueWithoutBackoff) {
  PfabricParams p;
  p.init_window_bytes = 4'000;
  p.probe_after = 0;
  PfabricSender tx(p, context(), flow(100'000, 1'000));
  ASSERT_EQ(send_all(tx, 1'000).size(), 4u);
  EXPECT_EQ(tx.timer_due_ns(), 25'000u);  // 1000 + 24 us
  tx.on_timer(24'999);                    // early: nothing
  EXPECT_EQ(tx.counters().timeouts, 0u);
  tx.on_timer(25'000);
  EXPECT_EQ(tx.counters().timeouts, 1u);
  EXPECT_EQ(tx.timer_due_ns(), 49'000u);
  ASSERT_EQ(send_all(tx, 25'000).size(), 1u);  // one segment: the window is 1 MSS
  tx.on_timer(49'000);
  EXPECT_EQ(tx.counters().timeouts, 2u);
  EXPECT_EQ(tx.timer_due_ns(), 73'000u);  // still 24 us: no doubling
}

// On a timeout: ssthresh = half the window (at least two segments), window
// one segment, back to the first unacknowledged byte; then slow start.
TEST(PfabricSender, TimeoutHalvesSsthreshAndRestartsFromOneSegment) {
  PfabricParams p;
  p.init_window_bytes = 10'000;
  PfabricSender tx(p, context(), flow(100'000));
  send_all(tx, 0);
  tx.receive(8'000, ack(1'000));
  tx.receive(8'000, ack(2'000));  // 12,000 B window, 2 of 10 acked
  ASSERT_EQ(tx.cwnd_bytes(), 12'000u);
  send_all(tx, 8'000);
  tx.on_timer(tx.timer_due_ns());
  EXPECT_EQ(tx.ssthresh_bytes(), 6'000u);
  EXPECT_EQ(tx.cwnd_bytes(), 1'000u);
  EXPECT_EQ(tx.snd_nxt(), 2'000u);
  const std::vector<Segment> r = send_all(tx, 32'000);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].seq, 2'000u);
  EXPECT_EQ(tx.counters().retransmitted, 1u);
  // Slow start again: 1, 2, ... until ssthresh, then one per window.
  tx.receive(40'000, ack(3'000));
  EXPECT_EQ(tx.cwnd_bytes(), 2'000u);
  // A second timeout with a one-segment window: ssthresh at its floor.
  tx.on_timer(tx.timer_due_ns());
  EXPECT_EQ(tx.ssthresh_bytes(), 2'000u);
}

// SACKed segments are not sent again after a timeout, and do not count as
// in flight.
TEST(PfabricSender, TimeoutResendsOnlyWhatNoSackCovers) {
  PfabricParams p;
  p.init_window_bytes = 6'000;
  PfabricSender tx(p, context(), flow(6'000));
  send_all(tx, 0);
  // Segments 0 and 3 lost; 1, 2, 4, 5 SACKed.
  for (uint64_t s : {1, 2, 4, 5}) tx.receive(8'000 + s, sack(0, s * 1000, s * 1000 + 1000));
  EXPECT_EQ(tx.sacked_bytes(), 4'000u);
  EXPECT_EQ(tx.rank(), 2'000u);
  tx.on_timer(tx.timer_due_ns());
  std::vector<Segment> r = send_all(tx, 24'000);
  ASSERT_EQ(r.size(), 1u);  // one segment in flight: segment 0
  EXPECT_EQ(r[0].seq, 0u);
  EXPECT_EQ(r[0].rank, 2'000u);
  tx.receive(32'000, ack(3'000));  // segment 0 arrived: 1 and 2 were there
  EXPECT_EQ(tx.snd_una(), 3'000u);
  EXPECT_EQ(tx.sacked_bytes(), 2'000u);
  r = send_all(tx, 32'000);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].seq, 3'000u);  // the other hole; 4 and 5 skipped
  EXPECT_EQ(tx.send_due_ns(), kTransportNever);
  tx.receive(40'000, ack(6'000));
  EXPECT_EQ(tx.completed_ns(), 40'000u);
  EXPECT_EQ(tx.counters().retransmitted, 2u);
  EXPECT_EQ(tx.counters().data_segments, 8u);
}

// Five consecutive timeouts: the fifth and each later one send a single
// one-byte probe at the first unacknowledged byte; an ACK ends probe mode,
// and the flow goes on in slow start from one segment.
TEST(PfabricSender, ProbeModeAfterFiveConsecutiveTimeouts) {
  PfabricParams p;
  p.init_window_bytes = 3'000;
  PfabricSender tx(p, context(), flow(10'000));
  send_all(tx, 0);
  uint64_t t = 0;
  for (uint32_t k = 1; k <= 4; ++k) {
    t = tx.timer_due_ns();
    tx.on_timer(t);
    EXPECT_FALSE(tx.probing()) << k;
    const std::vector<Segment> r = send_all(tx, t);
    ASSERT_EQ(r.size(), 1u) << k;
    EXPECT_EQ(r[0].bytes, 1000u) << k;  // a whole segment
  }
  t = tx.timer_due_ns();
  tx.on_timer(t);
  EXPECT_TRUE(tx.probing());
  EXPECT_EQ(tx.consecutive_timeouts(), 5u);
  std::vector<Segment> r = send_all(tx, t);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].seq, 0u);
  EXPECT_EQ(r[0].bytes, 1u);  // the probe: one byte
  EXPECT_TRUE(r[0].has_rank);
  EXPECT_EQ(tx.send_due_ns(), kTransportNever);  // one per timeout
  t = tx.timer_due_ns();
  EXPECT_EQ(t, 5 * 24'000u + 24'000);
  tx.on_timer(t);
  r = send_all(tx, t);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].bytes, 1u);
  EXPECT_EQ(tx.probes(), 2u);
  EXPECT_EQ(tx.counters().timeouts, 6u);
  // The probe's ACK (nothing new acknowledged) ends probe mode.
  tx.receive(t + 8'000, ack(0));
  EXPECT_FALSE(tx.probing());
  EXPECT_EQ(tx.consecutive_timeouts(), 0u);
  EXPECT_EQ(tx.cwnd_bytes(), 1'000u);
  r = send_all(tx, t + 8'000);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].seq, 0u);
  EXPECT_EQ(r[0].bytes, 1000u);
  EXPECT_EQ(tx.timer_due_ns(), t + 8'000 + 24'000);
}

TEST(PfabricSender, AnAckBetweenTimeoutsKeepsThemFromCountingAsConsecutive) {
  PfabricParams p;
  p.init_window_bytes = 3'000;
  PfabricSender tx(p, context(), flow(10'000));
  send_all(tx, 0);
  for (int k = 0; k < 4; ++k) {
    tx.on_timer(tx.timer_due_ns());
    send_all(tx, tx.timer_due_ns() - 24'000);
  }
  EXPECT_EQ(tx.consecutive_timeouts(), 4u);
  tx.receive(200'000, ack(0));  // a duplicate ACK: the path delivers
  EXPECT_EQ(tx.consecutive_timeouts(), 0u);
  tx.on_timer(tx.timer_due_ns());
  EXPECT_FALSE(tx.probing());
  EXPECT_EQ(tx.counters().timeouts, 5u);
}

TEST(PfabricSender, ProbeModeOffWithProbeAfterZero) {
  PfabricParams p;
  p.init_window_bytes = 1'000;
  p.probe_after = 0;
  PfabricSender tx(p, context(), flow(10'000));
  send_all(tx, 0);
  for (int k = 0; k < 20; ++k) {
    const uint64_t t = tx.timer_due_ns();
    tx.on_timer(t);
    const std::vector<Segment> r = send_all(tx, t);
    ASSERT_EQ(r.size(), 1u);
    EXPECT_EQ(r[0].bytes, 1000u);
  }
  EXPECT_FALSE(tx.probing());
  EXPECT_EQ(tx.probes(), 0u);
}

TEST(PfabricSender, ZeroByteFlowIsDoneAtItsStart) {
  PfabricSender tx(PfabricParams{}, context(), flow(0, 500));
  EXPECT_EQ(tx.completed_ns(), 500u);
  EXPECT_EQ(tx.send_due_ns(), kTransportNever);
}

// -------------------------------------------------------------- receiver

TEST(PfabricReceiver, AcksEverySegmentWithRankZeroAndSacksWhatIsAboveTheHole) {
  PfabricReceiver rx(context(), flow(5'500));
  Segment out[FlowReceiver::kMaxReplies];
  ASSERT_EQ(rx.receive(10, data(0, 1000, 3), out), 1u);
  EXPECT_EQ(out[0].kind, SegmentKind::kAck);
  EXPECT_EQ(out[0].seq, 1'000u);
  EXPECT_EQ(out[0].ts_ns, 3u);  // echoes the data's send time
  EXPECT_TRUE(out[0].has_rank);
  EXPECT_EQ(out[0].rank, 0u);  // ACKs rank first
  EXPECT_FALSE(out[0].has_sack);
  // Segment 1 lost; 2 arrives: cumulative 1000, SACK [2000, 3000).
  ASSERT_EQ(rx.receive(20, data(2'000, 1000, 5), out), 1u);
  EXPECT_EQ(out[0].seq, 1'000u);
  ASSERT_TRUE(out[0].has_sack);
  EXPECT_EQ(out[0].sack_start, 2'000u);
  EXPECT_EQ(out[0].sack_end, 3'000u);
  // The hole fills: the cumulative point jumps over segment 2.
  ASSERT_EQ(rx.receive(30, data(1'000, 1000, 7), out), 1u);
  EXPECT_EQ(out[0].seq, 3'000u);
  EXPECT_FALSE(out[0].has_sack);
  EXPECT_EQ(rx.delivered_bytes(), 3'000u);
  // A duplicate: the cumulative point again.
  ASSERT_EQ(rx.receive(40, data(0, 1000, 9), out), 1u);
  EXPECT_EQ(out[0].seq, 3'000u);
  EXPECT_FALSE(out[0].has_sack);
  // The short last segment is whole.
  ASSERT_EQ(rx.receive(50, data(5'000, 500, 11), out), 1u);
  EXPECT_EQ(out[0].seq, 3'000u);
  EXPECT_EQ(out[0].sack_end, 5'500u);
  ASSERT_EQ(rx.receive(60, data(3'000, 1000, 13), out), 1u);
  ASSERT_EQ(rx.receive(70, data(4'000, 1000, 15), out), 1u);
  EXPECT_EQ(out[0].seq, 5'500u);
  EXPECT_EQ(rx.delivered_bytes(), 5'500u);
}

TEST(PfabricReceiver, ProbeDrawsAnAckButIsNotTaken) {
  PfabricReceiver rx(context(), flow(5'000));
  Segment out[FlowReceiver::kMaxReplies];
  ASSERT_EQ(rx.receive(10, data(0, 1, 3), out), 1u);
  EXPECT_EQ(out[0].seq, 0u);
  EXPECT_FALSE(out[0].has_sack);
  EXPECT_EQ(rx.delivered_bytes(), 0u);
  // Not on a segment boundary, past the flow, or not data: nothing.
  EXPECT_EQ(rx.receive(20, data(10, 990, 3), out), 0u);
  EXPECT_EQ(rx.receive(20, data(5'000, 1000, 3), out), 0u);
  EXPECT_EQ(rx.receive(20, ack(0), out), 0u);
}

// ---------------------------------------------------------- closed loop

TEST(PfabricLoop, LosslessFlowCompletesWithoutRetransmissions) {
  PfabricSender tx(PfabricParams{}, context(), flow(300'000));
  PfabricReceiver rx(context(), flow(300'000));
  Loop loop(&tx, &rx);
  loop.run(1'000'000);
  // 300 segments, 88 ns apart (the window never runs dry after the first
  // RTT: it grows by a segment per ACK): the last leaves at 299 x 88 =
  // 26,312 ns, its ACK is back 8 us later.
  EXPECT_EQ(tx.completed_ns(), 299u * 88 + 8'000);
  EXPECT_EQ(rx.delivered_bytes(), 300'000u);
  EXPECT_EQ(tx.counters().data_segments, 300u);
  EXPECT_EQ(tx.counters().retransmitted, 0u);
  EXPECT_EQ(tx.counters().timeouts, 0u);
}

// Two losses in one window: the timer finds the first; SACKs keep the
// resends to the two lost segments.
TEST(PfabricLoop, LossesAreRepairedByTheTimeoutAndSacks) {
  PfabricSender tx(PfabricParams{}, context(), flow(20'000));
  PfabricReceiver rx(context(), flow(20'000));
  Loop loop(&tx, &rx);
  loop.drop = [](const Segment& s, int n) { return n == 0 && (s.seq == 3'000 || s.seq == 10'000); };
  loop.run(1'000'000);
  EXPECT_EQ(rx.delivered_bytes(), 20'000u);
  EXPECT_EQ(tx.counters().timeouts, 1u);
  EXPECT_EQ(tx.counters().retransmitted, 2u);
  // The ACK of segment 2 (sent at 176, back at 8,176) was the last progress:
  // the timer fired 24 us later, at 32,176, and segment 3 went again; its
  // ACK (40,176) moved the cumulative point over the SACKed 4..9 to 10,000
  // and let segment 10 go; its ACK came at 48,176.
  EXPECT_EQ(tx.completed_ns(), 48'176u);
}

// A path that loses everything for a while: five timeouts, then probes
// every RTO; once the path delivers, the probe's ACK brings the flow back.
TEST(PfabricLoop, ProbesUntilThePathDeliversThenCompletes) {
  PfabricSender tx(PfabricParams{}, context(), flow(5'000));
  PfabricReceiver rx(context(), flow(5'000));
  Loop loop(&tx, &rx);
  loop.drop = [&loop](const Segment&, int) { return loop.now < 200'000; };
  loop.run(10'000'000);
  EXPECT_EQ(rx.delivered_bytes(), 5'000u);
  // Timeouts every 24 us from the first send: segments at 24, 48, 72 and
  // 96 us, probes from the fifth on (120 us) until one gets through (216 us).
  std::vector<uint64_t> probes;
  for (const auto& [t, s] : loop.sent) {
    if (s.bytes != 1) continue;
    EXPECT_EQ(s.seq, 0u);
    probes.push_back(t);
  }
  EXPECT_EQ(probes, (std::vector<uint64_t>{120'000, 144'000, 168'000, 192'000, 216'000}));
  EXPECT_EQ(tx.counters().timeouts, 9u);
  // Its ACK (224 us) ends probe mode; then slow start from one segment:
  // 1 segment, then 2, then 2 more (a segment per ACK): done in 3 RTTs.
  EXPECT_EQ(tx.completed_ns(), 224'000u + 3 * 8'000 + 88);
}

}  // namespace
}  // namespace sluice
