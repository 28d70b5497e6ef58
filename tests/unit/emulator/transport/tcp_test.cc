// TCP NewReno and DCTCP (lib/emulator/transport/tcp/): slow start and congestion
// avoidance (RFC 5681), fast retransmit and NewReno recovery (RFC 6582), the
// RTO (RFC 6298), ECN (RFC 3168) and DCTCP's alpha, cut and receiver state
// machine ("Data Center TCP (DCTCP)", section 3.1). Time is simulated; every
// expected value is worked out by hand in the comments next to it.
#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <vector>

#include "lib/emulator/transport/tcp/tcp_receiver.h"
#include "lib/emulator/transport/tcp/tcp_sender.h"

namespace sluice {
namespace {

constexpr uint64_t kMs = 1'000'000;

TransportContext context() {
  TransportContext ctx;
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

Segment ack(uint64_t seq, uint64_t ts_ns, bool ece = false) {
  Segment s;
  s.kind = SegmentKind::kAck;
  s.flow = 7;
  s.seq = seq;
  s.ts_ns = ts_ns;
  s.ece = ece;
  return s;
}

Segment data(uint64_t seq, uint32_t bytes, uint64_t ts_ns, uint8_t ecn = kEcnEct0) {
  Segment s;
  s.kind = SegmentKind::kData;
  s.flow = 7;
  s.seq = seq;
  s.bytes = bytes;
  s.ts_ns = ts_ns;
  s.ecn = ecn;
  return s;
}

// Everything the sender will send at now_ns, in order.
std::vector<Segment> send_all(TcpSender& tx, uint64_t now_ns) {
  std::vector<Segment> out;
  Segment s;
  while (tx.send(now_ns, &s)) out.push_back(s);
  return out;
}

// Sender and receiver joined by a fixed one-way delay each way; the sender's
// NIC puts out one segment per `gap_ns`. `drop` loses data segments, `mark`
// sets CE on them. Events at one instant: data arrivals, then ACK arrivals,
// then the receiver's timer, the sender's timer, and sends.
struct Loop {
  Loop(TcpSender* sender, TcpReceiver* receiver) : tx(sender), rx(receiver) {}
  TcpSender* tx;
  TcpReceiver* rx;
  uint64_t one_way_ns = 5'000;
  uint64_t gap_ns = 0;
  std::function<bool(const Segment&)> drop = [](const Segment&) { return false; };
  std::function<bool(const Segment&)> mark = [](const Segment&) { return false; };
  std::multimap<uint64_t, Segment> to_rx, to_tx;
  uint64_t now = 0;
  uint64_t nic_free = 0;
  std::vector<std::pair<uint64_t, Segment>> sent;  // (instant, segment)

  void run(uint64_t until_ns) {
    for (int guard = 0; guard < 1'000'000; ++guard) {
      uint64_t t = kTransportNever;
      if (!to_rx.empty()) t = std::min(t, to_rx.begin()->first);
      if (!to_tx.empty()) t = std::min(t, to_tx.begin()->first);
      t = std::min({t, rx->timer_due_ns(), tx->timer_due_ns()});
      const uint64_t due = tx->send_due_ns();
      if (due != kTransportNever) t = std::min(t, std::max({due, nic_free, now}));
      if (t == kTransportNever || t > until_ns) return;
      now = t;
      Segment replies[FlowReceiver::kMaxReplies];
      if (!to_rx.empty() && to_rx.begin()->first == t) {
        const Segment d = to_rx.begin()->second;
        to_rx.erase(to_rx.begin());
        const uint32_t n = rx->receive(t, d, replies);
        for (uint32_t i = 0; i < n; ++i) to_tx.emplace(t + one_way_ns, replies[i]);
      } else if (!to_tx.empty() && to_tx.begin()->first == t) {
        const Segment a = to_tx.begin()->second;
        to_tx.erase(to_tx.begin());
        tx->receive(t, a);
      } else if (rx->timer_due_ns() == t) {
        const uint32_t n = rx->on_timer(t, replies);
        for (uint32_t i = 0; i < n; ++i) to_tx.emplace(t + one_way_ns, replies[i]);
      } else if (tx->timer_due_ns() == t) {
        tx->on_timer(t);
      } else {
        Segment s;
        ASSERT_TRUE(tx->send(t, &s)) << "send_due_ns promised a segment at " << t;
        sent.emplace_back(t, s);
        nic_free = t + gap_ns;
        if (drop(s)) continue;
        if (mark(s)) s.ecn = kEcnCe;
        to_rx.emplace(t + one_way_ns, s);
      }
    }
    FAIL() << "loop did not settle";
  }

  std::map<uint64_t, int> sends_per_instant() const {
    std::map<uint64_t, int> m;
    for (const auto& [t, s] : sent) ++m[t];
    return m;
  }
};

// ---------------------------------------------------------------- sender

TEST(TcpSender, SegmentsAreMssSizedExceptTheLastAndNeverPassTheFlow) {
  TcpSender tx(TcpParams{}, context(), flow(2'500));
  const std::vector<Segment> s = send_all(tx, 0);
  ASSERT_EQ(s.size(), 3u);  // 2500 bytes: 1000 + 1000 + 500
  EXPECT_EQ(s[0].seq, 0u);
  EXPECT_EQ(s[0].bytes, 1000u);
  EXPECT_EQ(s[1].seq, 1000u);
  EXPECT_EQ(s[2].seq, 2000u);
  EXPECT_EQ(s[2].bytes, 500u);
  for (const Segment& x : s) {
    EXPECT_EQ(x.kind, SegmentKind::kData);
    EXPECT_EQ(x.flow, 7u);
    EXPECT_EQ(x.ecn, kEcnEct0);
    EXPECT_EQ(x.ts_ns, 0u);
    EXPECT_FALSE(x.int_request);
  }
  EXPECT_EQ(tx.send_due_ns(), kTransportNever);  // nothing left to send
  EXPECT_EQ(tx.counters().data_segments, 3u);
  EXPECT_EQ(tx.window_bytes(), 10'000u);  // IW10
  EXPECT_EQ(tx.rate_bps(), 0u);
}

TEST(TcpSender, SendDueIsNowWhileTheWindowHasRoomAndNotBeforeTheStart) {
  TcpSender tx(TcpParams{}, context(), flow(100'000, 5'000));
  EXPECT_EQ(tx.send_due_ns(), 5'000u);
  Segment s;
  EXPECT_FALSE(tx.send(4'999, &s));
  EXPECT_EQ(send_all(tx, 6'000).size(), 10u);    // IW10 of 1000-byte segments
  EXPECT_EQ(tx.send_due_ns(), kTransportNever);  // window full
  tx.receive(16'000, ack(1'000, 6'000));
  EXPECT_EQ(tx.send_due_ns(), 6'000u);  // room again: any time from the last send on
}

TEST(TcpSender, NotEctWithoutEcnAndEceThenIgnored) {
  TcpParams p;
  p.ecn = false;
  TcpSender tx(p, context(), flow(100'000));
  const std::vector<Segment> s = send_all(tx, 0);
  EXPECT_EQ(s[0].ecn, kEcnNotEct);
  tx.receive(10'000, ack(1'000, 0, true));
  EXPECT_EQ(tx.cwnd_bytes(), 11'000u);  // slow start as if unmarked
  EXPECT_EQ(tx.counters().ecn_echoes, 1u);
}

TEST(TcpSender, SlowStartDoublesTheWindowEachRtt) {
  TcpSender tx(TcpParams{}, context(), flow(10'000'000));
  TcpReceiver rx(TcpParams{}, context(), flow(10'000'000));
  Loop loop(&tx, &rx);
  loop.run(30'000);  // RTT 10 us, all sends of a round at one instant
  // IW10, then each ACK adds one MSS: 10, 20, 40, 80 segments per round.
  const std::map<uint64_t, int> expected{{0, 10}, {10'000, 20}, {20'000, 40}, {30'000, 80}};
  EXPECT_EQ(loop.sends_per_instant(), expected);
  EXPECT_EQ(tx.cwnd_bytes(), 80'000u);
}

TEST(TcpSender, SlowStartStillDoublesWithDelayedAcks) {
  TcpParams p;
  p.ack_every = 2;
  TcpSender tx(p, context(), flow(10'000'000));
  TcpReceiver rx(p, context(), flow(10'000'000));
  Loop loop(&tx, &rx);
  loop.run(20'000);
  // One ACK per two segments, each adding min(2000, 2 MSS): still 10, 20, 40.
  const std::map<uint64_t, int> expected{{0, 10}, {10'000, 20}, {20'000, 40}};
  EXPECT_EQ(loop.sends_per_instant(), expected);
}

TEST(TcpSender, CongestionAvoidanceAddsOneMssPerRtt) {
  TcpParams p;
  p.initial_ssthresh_bytes = 10'000;  // = IW: avoidance from the start
  TcpSender tx(p, context(), flow(10'000'000));
  TcpReceiver rx(p, context(), flow(10'000'000));
  Loop loop(&tx, &rx);
  loop.run(30'000);
  // A full window of ACKs adds one MSS: 10, 11, 12, 13 segments per round.
  const std::map<uint64_t, int> expected{{0, 10}, {10'000, 11}, {20'000, 12}, {30'000, 13}};
  EXPECT_EQ(loop.sends_per_instant(), expected);
  EXPECT_EQ(tx.cwnd_bytes(), 13'000u);
}

TEST(TcpSender, SlowStartGrowthPerAckIsCappedAtTwoMss) {
  TcpSender tx(TcpParams{}, context(), flow(100'000));
  send_all(tx, 0);
  tx.receive(10'000, ack(5'000, 0));  // 5 segments at once: + min(5000, 2 x 1000)
  EXPECT_EQ(tx.cwnd_bytes(), 12'000u);
}

TEST(TcpSender, ThreeDupAcksFastRetransmitAndRecover) {
  TcpSender tx(TcpParams{}, context(), flow(30'000));
  ASSERT_EQ(send_all(tx, 0).size(), 10u);  // 0..9999; segment 3 (3000..3999) is lost
  for (uint64_t a : {1'000u, 2'000u, 3'000u}) tx.receive(10'000, ack(a, 0));
  EXPECT_EQ(tx.cwnd_bytes(), 13'000u);  // 10 + 3 in slow start
  tx.receive(10'100, ack(3'000, 0));    // segments 4 and 5
  tx.receive(10'100, ack(3'000, 0));
  EXPECT_FALSE(tx.in_fast_recovery());
  tx.receive(10'100, ack(3'000, 0));  // segment 6: the third duplicate
  EXPECT_TRUE(tx.in_fast_recovery());
  EXPECT_EQ(tx.counters().fast_retransmits, 1u);
  // ssthresh = max(FlightSize / 2, 2 MSS) = (10000 - 3000) / 2; cwnd = ssthresh + 3 MSS.
  EXPECT_EQ(tx.ssthresh_bytes(), 3'500u);
  EXPECT_EQ(tx.cwnd_bytes(), 6'500u);
  std::vector<Segment> s = send_all(tx, 10'100);
  ASSERT_EQ(s.size(), 1u);  // the retransmission, regardless of the window
  EXPECT_EQ(s[0].seq, 3'000u);
  EXPECT_EQ(s[0].bytes, 1'000u);
  EXPECT_EQ(tx.counters().retransmitted, 1u);
  // Each further duplicate inflates cwnd by one MSS; new data goes once
  // 7000 in flight + 1000 fits.
  tx.receive(10'200, ack(3'000, 0));  // cwnd 7500
  EXPECT_TRUE(send_all(tx, 10'200).empty());
  tx.receive(10'200, ack(3'000, 0));  // cwnd 8500: 8000 fits
  s = send_all(tx, 10'200);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].seq, 10'000u);
  tx.receive(10'200, ack(3'000, 0));  // cwnd 9500: 9000 fits
  s = send_all(tx, 10'200);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].seq, 11'000u);
  // Full ACK (covers recover = 10000): cwnd = min(ssthresh, max(FlightSize, MSS) + MSS)
  // with FlightSize = 12000 - 10000.
  tx.receive(20'100, ack(10'000, 10'100));
  EXPECT_FALSE(tx.in_fast_recovery());
  EXPECT_EQ(tx.cwnd_bytes(), 3'000u);
  s = send_all(tx, 20'100);  // 2000 in flight + 1000
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].seq, 12'000u);
  EXPECT_EQ(tx.counters().timeouts, 0u);
}

TEST(TcpSender, NewRenoPartialAcksResendEachHoleAndResetTheTimerOnce) {
  TcpParams p;
  p.min_rto_ns = 10 * kMs;  // RTO stays 10 ms: SRTT + 4 RTTVAR is tens of us here
  TcpSender tx(p, context(), flow(100'000));
  ASSERT_EQ(send_all(tx, 0).size(), 10u);  // segments 3, 6 and 8 are lost
  for (uint64_t a : {1'000u, 2'000u, 3'000u}) tx.receive(10'000, ack(a, 0));
  EXPECT_EQ(tx.timer_due_ns(), 10'000 + 10 * kMs);
  tx.receive(10'100, ack(3'000, 0));  // 4
  tx.receive(10'100, ack(3'000, 0));  // 5
  tx.receive(10'200, ack(3'000, 0));  // 7: fast retransmit, ssthresh 3500, cwnd 6500
  ASSERT_EQ(send_all(tx, 10'200).size(), 1u);
  tx.receive(10'300, ack(3'000, 0));  // 9: cwnd 7500, 8000 does not fit
  EXPECT_TRUE(send_all(tx, 10'300).empty());
  EXPECT_EQ(tx.timer_due_ns(), 10'000 + 10 * kMs);  // duplicates leave the timer alone

  // First partial ACK (3 arrived; 4, 5 were there): 3000 acked, so
  // cwnd = 7500 - 3000 + 1000 = 5500; the timer restarts.
  tx.receive(20'200, ack(6'000, 10'200));
  EXPECT_TRUE(tx.in_fast_recovery());
  EXPECT_EQ(tx.cwnd_bytes(), 5'500u);
  EXPECT_EQ(tx.timer_due_ns(), 20'200 + 10 * kMs);
  std::vector<Segment> s = send_all(tx, 20'200);
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0].seq, 6'000u);   // the next hole
  EXPECT_EQ(s[1].seq, 10'000u);  // 4000 in flight + 1000 fits 5500
  // Second partial ACK (6 arrived; 7 was there): 2000 acked,
  // cwnd = 5500 - 2000 + 1000 = 4500; the timer is not restarted.
  tx.receive(30'200, ack(8'000, 20'200));
  EXPECT_EQ(tx.cwnd_bytes(), 4'500u);
  EXPECT_EQ(tx.timer_due_ns(), 20'200 + 10 * kMs);
  s = send_all(tx, 30'200);
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0].seq, 8'000u);
  EXPECT_EQ(s[1].seq, 11'000u);  // 3000 in flight + 1000 fits 4500
  // Full ACK: everything sent is acknowledged; cwnd = min(3500, max(0, 1000) + 1000).
  tx.receive(40'200, ack(12'000, 30'200));
  EXPECT_FALSE(tx.in_fast_recovery());
  EXPECT_EQ(tx.cwnd_bytes(), 2'000u);
  EXPECT_EQ(tx.timer_due_ns(), kTransportNever);  // nothing outstanding
  EXPECT_EQ(tx.counters().fast_retransmits, 1u);
  EXPECT_EQ(tx.counters().retransmitted, 3u);
}

TEST(TcpSender, LossOfTheFirstSegmentIsFastRetransmitted) {
  TcpSender tx(TcpParams{}, context(), flow(100'000));
  send_all(tx, 0);
  for (int i = 0; i < 3; ++i) tx.receive(10'000, ack(0, 0));  // segments 1..3; 0 lost
  EXPECT_TRUE(tx.in_fast_recovery());
  const std::vector<Segment> s = send_all(tx, 10'000);
  ASSERT_FALSE(s.empty());
  EXPECT_EQ(s[0].seq, 0u);
}

TEST(TcpSender, DupAcksForDataSentBeforeAnRtoDoNotFastRetransmit) {
  TcpParams p;
  p.min_rto_ns = 10 * kMs;
  TcpSender tx(p, context(), flow(100'000));
  send_all(tx, 0);        // 0..9999, no ACK comes back
  tx.on_timer(10 * kMs);  // recover = 10000, ssthresh 5000, cwnd 1000
  ASSERT_EQ(send_all(tx, 10 * kMs).size(), 1u);
  tx.receive(10'010'000, ack(5'000, 10 * kMs));     // the receiver held 1..4: cwnd 3000
  ASSERT_EQ(send_all(tx, 10'010'000).size(), 3u);   // 5000, 6000, 7000 again
  tx.receive(10'020'000, ack(10'000, 10'010'000));  // it held 6..9 too: cwnd 5000
  ASSERT_EQ(send_all(tx, 10'020'000).size(), 5u);   // 10000..14999, new
  // 6000 and 7000 arrive again, and 11000 after a lost 10000: three
  // duplicates of exactly recover, which cannot tell the two apart
  // (RFC 6582, duplicate ACKs after a timeout): no fast retransmit.
  for (int i = 0; i < 3; ++i) tx.receive(10'020'000, ack(10'000, 10'010'000));
  EXPECT_FALSE(tx.in_fast_recovery());
  EXPECT_EQ(tx.counters().fast_retransmits, 0u);
  EXPECT_EQ(tx.timer_due_ns(), 10'020'000 + 10 * kMs);  // the RTO will resend 10000
}

TEST(TcpSender, WithoutFastRetransmitOnlyTheRtoRecovers) {
  TcpParams p;
  p.fast_retransmit = false;
  p.min_rto_ns = 10 * kMs;
  TcpSender tx(p, context(), flow(100'000));
  ASSERT_EQ(send_all(tx, 0).size(), 10u);                         // segment 1 is lost
  tx.receive(10'000, ack(1'000, 0));                              // cwnd 11000, timer restarted
  for (int i = 0; i < 8; ++i) tx.receive(10'000, ack(1'000, 0));  // segments 2..9
  EXPECT_FALSE(tx.in_fast_recovery());
  EXPECT_EQ(tx.counters().fast_retransmits, 0u);
  EXPECT_EQ(tx.timer_due_ns(), 10'000 + 10 * kMs);
  tx.on_timer(10'000 + 10 * kMs - 1);  // early: nothing
  EXPECT_EQ(tx.counters().timeouts, 0u);

  tx.on_timer(10'000 + 10 * kMs);
  EXPECT_EQ(tx.counters().timeouts, 1u);
  EXPECT_EQ(tx.cwnd_bytes(), 1'000u);      // loss window: 1 MSS
  EXPECT_EQ(tx.ssthresh_bytes(), 4'500u);  // (10000 - 1000) / 2
  EXPECT_EQ(tx.rto_ns(), 20 * kMs);        // backed off
  EXPECT_EQ(tx.snd_nxt(), 1'000u);         // go back to snd_una
  std::vector<Segment> s = send_all(tx, 10'010'000);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].seq, 1'000u);
  EXPECT_EQ(tx.timer_due_ns(), 10'010'000 + 20 * kMs);
  EXPECT_EQ(tx.counters().retransmitted, 1u);
  // The receiver held 2..9: the ACK jumps to 10000; slow start + min(9000, 2000).
  tx.receive(10'020'000, ack(10'000, 10'010'000));
  EXPECT_EQ(tx.snd_nxt(), 10'000u);
  EXPECT_EQ(tx.cwnd_bytes(), 3'000u);
  EXPECT_EQ(tx.rto_ns(), 10 * kMs);  // a new sample ends the backoff
  EXPECT_EQ(tx.timer_due_ns(), kTransportNever);
  s = send_all(tx, 10'020'000);
  ASSERT_EQ(s.size(), 3u);
  EXPECT_EQ(s[0].seq, 10'000u);
  EXPECT_EQ(tx.counters().retransmitted, 1u);  // new data
}

TEST(TcpSender, TailLossTimesOutAtLastAckPlusMinRtoThenBacksOff) {
  TcpParams p;
  p.min_rto_ns = 10 * kMs;
  TcpSender tx(p, context(), flow(3'000));
  // Handshake sample of the 8 us base RTT: RTO = max(10 ms, 8 + 4 x 4 us) = 10 ms.
  EXPECT_EQ(tx.rto_ns(), 10 * kMs);
  ASSERT_EQ(send_all(tx, 0).size(), 3u);
  EXPECT_EQ(tx.timer_due_ns(), 10 * kMs);
  tx.receive(10'000, ack(1'000, 0));
  EXPECT_EQ(tx.timer_due_ns(), 10'000 + 10 * kMs);
  tx.receive(11'000, ack(2'000, 0));  // segment 2 (the tail) is lost
  EXPECT_EQ(tx.timer_due_ns(), 10'011'000u);
  tx.on_timer(10'011'000);
  // FlightSize 1000: ssthresh = max(500, 2 MSS).
  EXPECT_EQ(tx.ssthresh_bytes(), 2'000u);
  std::vector<Segment> s = send_all(tx, 10'011'000);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].seq, 2'000u);
  EXPECT_EQ(tx.timer_due_ns(), 10'011'000 + 20 * kMs);  // lost again
  tx.on_timer(30'011'000);
  EXPECT_EQ(tx.ssthresh_bytes(), 2'000u);  // held on a repeated timeout
  ASSERT_EQ(send_all(tx, 30'011'000).size(), 1u);
  EXPECT_EQ(tx.timer_due_ns(), 30'011'000 + 40 * kMs);
  EXPECT_EQ(tx.completed_ns(), 0u);
  tx.receive(30'021'000, ack(3'000, 30'011'000));
  EXPECT_EQ(tx.completed_ns(), 30'021'000u);
  EXPECT_EQ(tx.timer_due_ns(), kTransportNever);
  EXPECT_EQ(tx.send_due_ns(), kTransportNever);
  EXPECT_EQ(tx.counters().timeouts, 2u);
  EXPECT_EQ(tx.counters().retransmitted, 2u);
  EXPECT_EQ(tx.counters().data_segments, 5u);
}

TEST(TcpSender, BackoffStopsAtMaxRto) {
  TcpParams p;
  p.min_rto_ns = 10 * kMs;
  p.max_rto_ns = 30 * kMs;
  TcpSender tx(p, context(), flow(1'000));
  uint64_t t = 0;
  for (uint64_t expected : {10 * kMs, 20 * kMs, 30 * kMs, 30 * kMs}) {
    ASSERT_EQ(send_all(tx, t).size(), 1u);
    EXPECT_EQ(tx.timer_due_ns(), t + expected);
    t = tx.timer_due_ns();
    tx.on_timer(t);
  }
  EXPECT_EQ(tx.counters().timeouts, 4u);
}

TEST(TcpSender, RtoFollowsRfc6298FromTheEchoedSendTimes) {
  TcpParams p;
  p.min_rto_ns = 1'000;
  p.handshake_rtt_sample = false;
  TcpSender tx(p, context(), flow(10'000));
  EXPECT_EQ(tx.rto_ns(), 1'000 * kMs);  // RFC 6298 (2.1): 1 s before any sample
  Segment s;
  ASSERT_TRUE(tx.send(0, &s));
  EXPECT_EQ(tx.timer_due_ns(), 1'000 * kMs);
  ASSERT_TRUE(tx.send(8'000, &s));
  ASSERT_TRUE(tx.send(17'000, &s));
  // R = 10000: SRTT = 10000, RTTVAR = 5000, RTO = 10000 + 4 x 5000.
  tx.receive(10'000, ack(1'000, 0));
  EXPECT_EQ(tx.srtt_ns(), 10'000u);
  EXPECT_EQ(tx.rttvar_ns(), 5'000u);
  EXPECT_EQ(tx.rto_ns(), 30'000u);
  EXPECT_EQ(tx.timer_due_ns(), 40'000u);
  // R = 14000: RTTVAR = (3 x 5000 + 4000) / 4 = 4750, SRTT = (7 x 10000 + 14000) / 8 = 10500.
  tx.receive(22'000, ack(2'000, 8'000));
  EXPECT_EQ(tx.rttvar_ns(), 4'750u);
  EXPECT_EQ(tx.srtt_ns(), 10'500u);
  EXPECT_EQ(tx.rto_ns(), 29'500u);
  // R = 6000: RTTVAR = (14250 + 4500) / 4 = 4687 (.5 dropped),
  // SRTT = (73500 + 6000) / 8 = 9937 (.5 dropped); RTO = 9937 + 18748.
  tx.receive(23'000, ack(3'000, 17'000));
  EXPECT_EQ(tx.rttvar_ns(), 4'687u);
  EXPECT_EQ(tx.srtt_ns(), 9'937u);
  EXPECT_EQ(tx.rto_ns(), 28'685u);
  EXPECT_EQ(tx.timer_due_ns(), kTransportNever);  // all sent data acknowledged
  ASSERT_TRUE(tx.send(23'000, &s));
  EXPECT_EQ(tx.timer_due_ns(), 23'000u + 28'685u);
}

TEST(TcpSender, HandshakeSampleMakesTheFirstRtoThreeBaseRtts) {
  TcpParams p;
  p.min_rto_ns = 1'000;
  TcpSender tx(p, context(), flow(10'000));
  // One 8 us sample: SRTT 8000, RTTVAR 4000, RTO = 8000 + 16000.
  EXPECT_EQ(tx.rto_ns(), 24'000u);
  Segment s;
  ASSERT_TRUE(tx.send(100, &s));
  EXPECT_EQ(tx.timer_due_ns(), 24'100u);
}

TEST(TcpSender, StaleAndImpossibleAcksAreIgnored) {
  TcpSender tx(TcpParams{}, context(), flow(100'000));
  send_all(tx, 0);
  tx.receive(10'000, ack(2'000, 0));
  tx.receive(10'000, ack(1'000, 0));   // older than snd_una
  tx.receive(10'000, ack(50'000, 0));  // beyond anything sent
  EXPECT_EQ(tx.snd_una(), 2'000u);
  EXPECT_EQ(tx.cwnd_bytes(), 12'000u);
}

TEST(TcpSender, CompletionIsTheInstantOfTheFinalAck) {
  TcpSender tx(TcpParams{}, context(), flow(2'500));
  TcpReceiver rx(TcpParams{}, context(), flow(2'500));
  Loop loop(&tx, &rx);
  loop.gap_ns = 1'000;
  loop.run(1 * kMs);
  // Sends at 0, 1000, 2000; the last arrives at 7000 and its ACK at 12000.
  EXPECT_EQ(tx.completed_ns(), 12'000u);
  EXPECT_EQ(rx.delivered_bytes(), 2'500u);
  EXPECT_EQ(tx.timer_due_ns(), kTransportNever);
}

TEST(TcpSender, AnOddLastSegmentWaitsForTheDelayedAckTimer) {
  TcpParams p;
  p.ack_every = 2;
  p.delayed_ack_ns = 40'000;
  TcpSender tx(p, context(), flow(3'000));
  TcpReceiver rx(p, context(), flow(3'000));
  Loop loop(&tx, &rx);
  loop.gap_ns = 1'000;
  loop.run(1 * kMs);
  // Arrivals at 5000, 6000, 7000: an ACK for two at 6000; the third is
  // ACKed by the timer at 7000 + 40000 and that ACK lands 5000 later.
  EXPECT_EQ(tx.completed_ns(), 52'000u);
}

TEST(TcpSender, OneLossRecoversByFastRetransmitWithoutTimeout) {
  TcpSender tx(TcpParams{}, context(), flow(50'000));
  TcpReceiver rx(TcpParams{}, context(), flow(50'000));
  Loop loop(&tx, &rx);
  loop.gap_ns = 100;
  bool dropped = false;
  loop.drop = [&](const Segment& s) {
    if (s.seq != 4'000 || dropped) return false;
    dropped = true;
    return true;
  };
  loop.run(1'000 * kMs);
  EXPECT_EQ(rx.delivered_bytes(), 50'000u);
  EXPECT_NE(tx.completed_ns(), 0u);
  EXPECT_EQ(tx.counters().fast_retransmits, 1u);
  EXPECT_EQ(tx.counters().retransmitted, 1u);
  EXPECT_EQ(tx.counters().timeouts, 0u);
  EXPECT_EQ(tx.counters().data_segments, 51u);
}

// ---------------------------------------------------------------- ECN

TEST(TcpSender, RenoEcnHalvesOncePerWindow) {
  TcpSender tx(TcpParams{}, context(), flow(100'000));
  send_all(tx, 0);                          // 0..9999
  tx.receive(10'000, ack(1'000, 0));        // cwnd 11000
  tx.receive(10'000, ack(2'000, 0, true));  // halve: 5500, no increase on this ACK
  EXPECT_EQ(tx.cwnd_bytes(), 5'500u);
  EXPECT_EQ(tx.ssthresh_bytes(), 5'500u);
  tx.receive(10'000, ack(3'000, 0, true));  // same window (sent before the cut)
  EXPECT_EQ(tx.cwnd_bytes(), 5'500u);
  // 4000..9000 unmarked: congestion avoidance, +1 MSS once 5500 bytes are
  // acknowledged (after the sixth).
  for (uint64_t a = 4'000; a <= 9'000; a += 1'000) tx.receive(10'000, ack(a, 0));
  EXPECT_EQ(tx.cwnd_bytes(), 6'500u);
  // 10000 marked: its data was sent before the cut (it ends at cwr_end), so
  // neither a cut nor an increase.
  tx.receive(10'000, ack(10'000, 0, true));
  EXPECT_EQ(tx.cwnd_bytes(), 6'500u);
  ASSERT_EQ(send_all(tx, 10'000).size(), 6u);     // 10000..15999
  tx.receive(20'000, ack(11'000, 10'000, true));  // data sent after the cut: halve again
  EXPECT_EQ(tx.cwnd_bytes(), 3'250u);
  EXPECT_EQ(tx.counters().ecn_echoes, 4u);
}

TEST(TcpSender, EcnCutAndLossInOneWindowLowerSsthreshOnce) {
  TcpSender tx(TcpParams{}, context(), flow(100'000));
  send_all(tx, 0);
  tx.receive(10'000, ack(1'000, 0));
  tx.receive(10'000, ack(2'000, 0, true));                        // ssthresh, cwnd 5500
  for (int i = 0; i < 3; ++i) tx.receive(10'100, ack(2'000, 0));  // segment 2 lost
  EXPECT_TRUE(tx.in_fast_recovery());
  // Without the ECN cut it would be (10000 - 2000) / 2 = 4000.
  EXPECT_EQ(tx.ssthresh_bytes(), 5'500u);
  EXPECT_EQ(tx.cwnd_bytes(), 8'500u);  // ssthresh + 3 MSS
}

TEST(TcpSender, DctcpAlphaIsTheFractionOfMarkedBytesInAWindow) {
  TcpParams p;
  p.dctcp = true;
  p.init_cwnd_segments = 11;
  TcpSender tx(p, context(), flow(10'500));
  ASSERT_EQ(send_all(tx, 0).size(), 11u);  // ten of 1000 bytes, one of 500
  EXPECT_DOUBLE_EQ(tx.dctcp_alpha(), 1.0);
  // Segment 0 (1000 bytes) and the last (500 bytes) marked: F = 1500 / 10500 = 1/7.
  tx.receive(10'000, ack(1'000, 0, true));
  // The first ECE cuts at once with alpha = 1: cwnd 11000 x (1 - 1/2).
  EXPECT_EQ(tx.cwnd_bytes(), 5'500u);
  for (uint64_t a = 2'000; a <= 10'000; a += 1'000) tx.receive(10'000, ack(a, 0));
  EXPECT_DOUBLE_EQ(tx.dctcp_alpha(), 1.0);  // the window is not over
  tx.receive(10'000, ack(10'500, 0, true));
  // alpha = (15/16) x 1 + (1/16) x (1/7) = 53/56.
  EXPECT_DOUBLE_EQ(tx.dctcp_alpha(), 53.0 / 56.0);
  EXPECT_EQ(tx.completed_ns(), 10'000u);
}

TEST(TcpSender, DctcpCutsByHalfAlphaAtMostOncePerWindow) {
  TcpParams p;
  p.dctcp = true;
  p.dctcp_initial_alpha = 0.5;
  TcpSender tx(p, context(), flow(1'000'000));
  send_all(tx, 0);                    // 0..9999
  tx.receive(10'000, ack(1'000, 0));  // cwnd 11000
  tx.receive(10'000, ack(2'000, 0, true));
  // cwnd x (1 - 0.5 / 2) = 11000 - 2750.
  EXPECT_EQ(tx.cwnd_bytes(), 8'250u);
  EXPECT_EQ(tx.ssthresh_bytes(), 8'250u);
  tx.receive(10'000, ack(3'000, 0, true));  // sent before the cut: no second cut
  EXPECT_EQ(tx.cwnd_bytes(), 8'250u);
  // 4000..10000 unmarked: 7000 bytes < cwnd, no avoidance increase yet.
  for (uint64_t a = 4'000; a <= 10'000; a += 1'000) tx.receive(10'000, ack(a, 0));
  EXPECT_EQ(tx.cwnd_bytes(), 8'250u);
  // The window 0..9999 had 2000 of 10000 bytes marked:
  // alpha = (15/16) x 0.5 + (1/16) x 0.2 = 0.48125.
  EXPECT_DOUBLE_EQ(tx.dctcp_alpha(), 0.48125);
  ASSERT_EQ(send_all(tx, 10'000).size(), 8u);  // 10000..17999
  tx.receive(20'000, ack(11'000, 10'000, true));
  // 8250 x 0.48125 / 2 = 1985.16 -> 1985 off.
  EXPECT_EQ(tx.cwnd_bytes(), 6'265u);
  tx.receive(20'000, ack(12'000, 10'000, true));  // same window again
  EXPECT_EQ(tx.cwnd_bytes(), 6'265u);
  EXPECT_DOUBLE_EQ(tx.dctcp_alpha(), 0.48125);  // the second window ends at 18000
  for (uint64_t a = 13'000; a <= 18'000; a += 1'000) tx.receive(20'000, ack(a, 10'000));
  // 2000 of 8000 bytes marked: alpha = (15/16) x 0.48125 + (1/16) x 0.25.
  EXPECT_DOUBLE_EQ(tx.dctcp_alpha(), 0.48125 * 15 / 16 + 0.25 / 16);
}

// DCTCP with htsim's cut, alpha held at 0.5 (g = 0).
TcpParams every_window_at_half() {
  TcpParams p;
  p.dctcp = true;
  p.dctcp_cut = DctcpCut::kEveryWindow;
  p.dctcp_initial_alpha = 0.5;
  p.dctcp_g = 0;
  return p;
}

TEST(TcpSender, DctcpEveryWindowCutsAtEachWindowsEndMarkedOrNot) {
  // Each window's end cuts by a quarter though nothing was marked; an ECE
  // does not cut.
  TcpParams p = every_window_at_half();
  TcpSender tx(p, context(), flow(1'000'000));
  ASSERT_EQ(send_all(tx, 0).size(), 10u);  // 0..9999
  // Slow start: the ACKs of 1000..9000 grow cwnd to 19000.
  for (uint64_t a = 1'000; a <= 9'000; a += 1'000) tx.receive(10'000, ack(a, 0));
  EXPECT_EQ(tx.cwnd_bytes(), 19'000u);
  // 10000 closes the window first: 19000 - 19000 x 0.5 / 2 = 14250, and
  // ssthresh with it, so its own ACK counts toward avoidance (1000 < 14250).
  tx.receive(10'000, ack(10'000, 0));
  EXPECT_EQ(tx.cwnd_bytes(), 14'250u);
  EXPECT_EQ(tx.ssthresh_bytes(), 14'250u);
  ASSERT_EQ(send_all(tx, 10'000).size(), 14u);  // 10000..23999
  tx.receive(20'000, ack(11'000, 10'000, true));
  EXPECT_EQ(tx.cwnd_bytes(), 14'250u);  // no cut, and no growth on an ECE
  EXPECT_EQ(tx.ssthresh_bytes(), 14'250u);
}

TEST(TcpSender, DctcpEveryWindowEndsSlowStartOnAnEceWithoutCutting) {
  TcpParams p = every_window_at_half();
  TcpSender tx(p, context(), flow(1'000'000));
  send_all(tx, 0);
  tx.receive(10'000, ack(1'000, 0, true));
  // DctcpCutsByHalfAlphaAtMostOncePerWindow's first ECE cuts 10000 to 7500;
  // this one leaves cwnd and puts ssthresh at it.
  EXPECT_EQ(tx.cwnd_bytes(), 10'000u);
  EXPECT_EQ(tx.ssthresh_bytes(), 10'000u);
  tx.receive(10'000, ack(2'000, 0));  // avoidance: 1000 of 10000 counted
  EXPECT_EQ(tx.cwnd_bytes(), 10'000u);
}

TEST(TcpSender, DctcpEveryWindowNeverRaisesTheWindowBelowTheFloor) {
  // After an RTO cwnd is 1 MSS, under the 2-MSS floor of a cut: a window's
  // end leaves it there (and ssthresh with it) rather than lifting it.
  TcpParams p = every_window_at_half();
  p.min_rto_ns = 10 * kMs;
  TcpSender tx(p, context(), flow(1'000'000));
  ASSERT_EQ(send_all(tx, 0).size(), 10u);  // 0..9999, all lost to the sender
  tx.on_timer(10 * kMs);
  EXPECT_EQ(tx.cwnd_bytes(), 1'000u);
  ASSERT_EQ(send_all(tx, 10 * kMs).size(), 1u);  // 0..999 again
  // The receiver had 1000..9999: one ACK covers the window (0..9999) and
  // closes it. The cut keeps 1000 and ssthresh follows; then the ACK's
  // 10000 bytes add one MSS in avoidance.
  tx.receive(10 * kMs + 20'000, ack(10'000, 10 * kMs));
  EXPECT_EQ(tx.ssthresh_bytes(), 1'000u);
  EXPECT_EQ(tx.cwnd_bytes(), 2'000u);
}

TEST(TcpSender, DctcpWithEndToEndMarkingKeepsAlphaAtTheMarkedFraction) {
  // Every data segment marked: F = 1 each window, alpha stays 1 and each
  // window halves cwnd.
  TcpParams p;
  p.dctcp = true;
  TcpSender tx(p, context(), flow(200'000));
  TcpReceiver rx(p, context(), flow(200'000));
  Loop loop(&tx, &rx);
  loop.mark = [](const Segment&) { return true; };
  loop.run(1'000 * kMs);
  EXPECT_DOUBLE_EQ(tx.dctcp_alpha(), 1.0);
  EXPECT_EQ(rx.delivered_bytes(), 200'000u);
  EXPECT_EQ(tx.cwnd_bytes(), 2'000u);  // the floor of 2 MSS
}

// ---------------------------------------------------------------- receiver

TEST(TcpReceiver, AcksEachSegmentEchoingItsSendTimeAndMarks) {
  TcpReceiver rx(TcpParams{}, context(), flow(2'500));
  Segment out[FlowReceiver::kMaxReplies];
  ASSERT_EQ(rx.receive(5'000, data(0, 1'000, 100), out), 1u);
  EXPECT_EQ(out[0].kind, SegmentKind::kAck);
  EXPECT_EQ(out[0].flow, 7u);
  EXPECT_EQ(out[0].seq, 1'000u);
  EXPECT_EQ(out[0].ts_ns, 100u);
  EXPECT_FALSE(out[0].ece);
  ASSERT_EQ(rx.receive(5'100, data(1'000, 1'000, 200, kEcnCe), out), 1u);
  EXPECT_EQ(out[0].seq, 2'000u);
  EXPECT_TRUE(out[0].ece);
  ASSERT_EQ(rx.receive(5'200, data(2'000, 500, 300, kEcnUe), out), 1u);
  EXPECT_EQ(out[0].seq, 2'500u);
  EXPECT_EQ(out[0].ts_ns, 300u);
  EXPECT_FALSE(out[0].ece);
  EXPECT_TRUE(out[0].ue_echo);
  EXPECT_EQ(rx.delivered_bytes(), 2'500u);
  EXPECT_EQ(rx.timer_due_ns(), kTransportNever);
}

TEST(TcpReceiver, OutOfOrderDuplicateAndGapFillingSegmentsAreAckedAtOnce) {
  TcpParams p;
  p.ack_every = 2;
  TcpReceiver rx(p, context(), flow(5'000));
  Segment out[FlowReceiver::kMaxReplies];
  EXPECT_EQ(rx.receive(1'000, data(0, 1'000, 10), out), 0u);  // held
  EXPECT_EQ(rx.timer_due_ns(), 41'000u);
  // A hole: duplicate ACK at once, echoing the segment that caused it.
  ASSERT_EQ(rx.receive(1'100, data(2'000, 1'000, 20), out), 1u);
  EXPECT_EQ(out[0].seq, 1'000u);
  EXPECT_EQ(out[0].ts_ns, 20u);
  EXPECT_EQ(rx.timer_due_ns(), kTransportNever);  // nothing held any more
  ASSERT_EQ(rx.receive(1'200, data(3'000, 1'000, 30), out), 1u);
  EXPECT_EQ(out[0].seq, 1'000u);
  // The hole filled: everything up to 4000 at once.
  ASSERT_EQ(rx.receive(1'300, data(1'000, 1'000, 40), out), 1u);
  EXPECT_EQ(out[0].seq, 4'000u);
  EXPECT_EQ(out[0].ts_ns, 40u);
  EXPECT_EQ(rx.delivered_bytes(), 4'000u);
  // Old data again: at once.
  ASSERT_EQ(rx.receive(1'400, data(0, 1'000, 50), out), 1u);
  EXPECT_EQ(out[0].seq, 4'000u);
  EXPECT_EQ(out[0].ts_ns, 50u);
}

TEST(TcpReceiver, DelayedAckCoalescesTwoSegmentsOrWaitsForTheTimer) {
  TcpParams p;
  p.ack_every = 2;
  p.delayed_ack_ns = 40'000;
  TcpReceiver rx(p, context(), flow(3'000));
  Segment out[FlowReceiver::kMaxReplies];
  EXPECT_EQ(rx.receive(1'000, data(0, 1'000, 10), out), 0u);
  EXPECT_EQ(rx.timer_due_ns(), 41'000u);
  ASSERT_EQ(rx.receive(2'000, data(1'000, 1'000, 20, kEcnCe), out), 1u);
  EXPECT_EQ(out[0].seq, 2'000u);
  EXPECT_EQ(out[0].ts_ns, 20u);
  EXPECT_TRUE(out[0].ece);  // CE on either segment
  EXPECT_EQ(rx.timer_due_ns(), kTransportNever);
  EXPECT_EQ(rx.receive(3'000, data(2'000, 1'000, 30), out), 0u);
  EXPECT_EQ(rx.timer_due_ns(), 43'000u);
  EXPECT_EQ(rx.on_timer(42'999, out), 0u);
  ASSERT_EQ(rx.on_timer(43'000, out), 1u);
  EXPECT_EQ(out[0].seq, 3'000u);
  EXPECT_EQ(out[0].ts_ns, 30u);
  EXPECT_FALSE(out[0].ece);
  EXPECT_EQ(rx.timer_due_ns(), kTransportNever);
}

TEST(TcpReceiver, DctcpStateChangeAcksWhatIsHeldWithTheOldState) {
  TcpParams p;
  p.dctcp = true;
  p.ack_every = 2;
  TcpReceiver rx(p, context(), flow(10'000));
  Segment out[FlowReceiver::kMaxReplies];
  EXPECT_EQ(rx.receive(1'000, data(0, 1'000, 10), out), 0u);
  // CE now: segment 0 goes at once without ECE; segment 1 is held.
  ASSERT_EQ(rx.receive(1'100, data(1'000, 1'000, 20, kEcnCe), out), 1u);
  EXPECT_EQ(out[0].seq, 1'000u);
  EXPECT_FALSE(out[0].ece);
  EXPECT_EQ(out[0].ts_ns, 10u);
  EXPECT_EQ(rx.timer_due_ns(), 41'100u);
  ASSERT_EQ(rx.receive(1'200, data(2'000, 1'000, 30, kEcnCe), out), 1u);  // two held
  EXPECT_EQ(out[0].seq, 3'000u);
  EXPECT_TRUE(out[0].ece);
  // Unmarked: a change with nothing held sends nothing extra.
  EXPECT_EQ(rx.receive(1'300, data(3'000, 1'000, 40), out), 0u);
  ASSERT_EQ(rx.receive(1'400, data(4'000, 1'000, 50, kEcnCe), out), 1u);
  EXPECT_EQ(out[0].seq, 4'000u);
  EXPECT_FALSE(out[0].ece);
  EXPECT_EQ(out[0].ts_ns, 40u);
  ASSERT_EQ(rx.on_timer(rx.timer_due_ns(), out), 1u);
  EXPECT_EQ(out[0].seq, 5'000u);
  EXPECT_TRUE(out[0].ece);
  // ECE covered exactly the marked bytes 1000..2999 and 4000..4999.
}

TEST(TcpReceiver, DctcpStateChangeAndHoleAnswerWithTwoAcks) {
  TcpParams p;
  p.dctcp = true;
  p.ack_every = 2;
  TcpReceiver rx(p, context(), flow(10'000));
  Segment out[FlowReceiver::kMaxReplies];
  EXPECT_EQ(rx.receive(1'000, data(0, 1'000, 10), out), 0u);
  ASSERT_EQ(rx.receive(1'100, data(2'000, 1'000, 20, kEcnCe), out), 2u);
  EXPECT_EQ(out[0].seq, 1'000u);
  EXPECT_FALSE(out[0].ece);
  EXPECT_EQ(out[0].ts_ns, 10u);
  EXPECT_EQ(out[1].seq, 1'000u);  // the duplicate ACK for the hole
  EXPECT_TRUE(out[1].ece);
  EXPECT_EQ(out[1].ts_ns, 20u);
}

TEST(TcpReceiver, DctcpAckingEverySegmentEchoesThatSegmentsCe) {
  TcpParams p;
  p.dctcp = true;
  TcpReceiver rx(p, context(), flow(10'000));
  Segment out[FlowReceiver::kMaxReplies];
  const bool marks[] = {true, false, false, true, true, false};
  for (uint64_t i = 0; i < 6; ++i) {
    ASSERT_EQ(rx.receive(1'000 + i, data(i * 1'000, 1'000, i, marks[i] ? kEcnCe : kEcnEct0), out),
              1u);
    EXPECT_EQ(out[0].seq, (i + 1) * 1'000);
    EXPECT_EQ(out[0].ece, marks[i]) << i;
  }
}

TEST(TcpReceiver, IgnoresWhatIsNotItsData) {
  TcpReceiver rx(TcpParams{}, context(), flow(2'000));
  Segment out[FlowReceiver::kMaxReplies];
  EXPECT_EQ(rx.receive(0, ack(1'000, 0), out), 0u);
  EXPECT_EQ(rx.receive(0, data(2'000, 1'000, 0), out), 0u);  // past the flow
  EXPECT_EQ(rx.receive(0, data(500, 1'000, 0), out), 0u);    // not on a segment boundary
  EXPECT_EQ(rx.delivered_bytes(), 0u);
}

// Flowtune's endpoint pacing: an allocation of 1 Gb/s opens the window
// and spaces segments by their frame's wire time at that rate. Context:
// 1000-byte payloads, header_bytes 78 and wire_overhead 24 by default, so a
// full segment's frame is 1102 bytes = 8816 ns at 1 Gb/s.
TEST(TcpAllocation, PacesAtTheRateWithTheWindowOpened) {
  TcpParams p;
  TcpSender tx(p, context(), flow(100'000));
  tx.set_allocation(1'000, 1'000'000'000, 1'000 + 10 * kMs);
  ASSERT_TRUE(tx.allocated());
  Segment s;
  ASSERT_TRUE(tx.send(1'000, &s));
  EXPECT_EQ(s.seq, 0u);
  // The second segment waits for the first one's 8816 ns.
  EXPECT_FALSE(tx.send(1'000, &s));
  EXPECT_EQ(tx.send_due_ns(), 1'000u + 8'816);
  EXPECT_FALSE(tx.send(9'815, &s));
  ASSERT_TRUE(tx.send(9'816, &s));
  EXPECT_EQ(s.seq, 1'000u);
  // The window opens to 2 x 1 Gb/s x 8 us (the base RTT) = 2000 bytes, no
  // less than cwnd (IW10 = 10000 bytes): 10 segments go unacknowledged,
  // the 11th waits for an ACK, paced or not.
  uint64_t t = 9'816;
  for (int i = 2; i < 10; ++i) {
    t += 8'816;
    ASSERT_TRUE(tx.send(t, &s)) << i;
  }
  t += 8'816;
  EXPECT_FALSE(tx.send(t, &s));
  EXPECT_EQ(tx.send_due_ns(), kTransportNever);
}

// A new rate re-times the waiting segment from the last one's start: 1 Mb/s
// spaces a 1102-byte frame 8,816,000 ns apart; raised to 1 Gb/s 10 us
// later, the next segment is due 8816 ns after the first, at once.
TEST(TcpAllocation, ANewRateRetimesTheWaitingSegment) {
  TcpParams p;
  TcpSender tx(p, context(), flow(100'000));
  tx.set_allocation(1'000, 1'000'000, 1'000 + 10 * kMs);
  Segment s;
  ASSERT_TRUE(tx.send(1'000, &s));
  EXPECT_EQ(tx.send_due_ns(), 1'000u + 8'816'000);
  tx.set_allocation(11'000, 1'000'000'000, 11'000 + 10 * kMs);
  EXPECT_EQ(tx.send_due_ns(), 1'000u + 8'816);
  ASSERT_TRUE(tx.send(11'000, &s));
  EXPECT_EQ(s.seq, 1'000u);
  // And a lower rate pushes the next one back: 2 Mb/s, 4,408,000 ns.
  tx.set_allocation(12'000, 2'000'000, 12'000 + 10 * kMs);
  EXPECT_EQ(tx.send_due_ns(), 11'000u + 4'408'000);
}

TEST(TcpAllocation, AWideAllocationOpensTheWindowBeyondCwnd) {
  TcpParams p;
  p.init_cwnd_segments = 1;
  TcpSender tx(p, context(), flow(100'000));
  // 10 Gb/s for 8 us, twice: 20000 bytes, 20 segments, against cwnd 1.
  tx.set_allocation(0, 10'000'000'000, 10 * kMs);
  Segment s;
  uint64_t t = 0;
  int sent = 0;
  while (sent < 30 && tx.send_due_ns() != kTransportNever) {
    t = tx.send_due_ns();
    ASSERT_TRUE(tx.send(t, &s));
    ++sent;
  }
  EXPECT_EQ(sent, 20);
  // 1102 bytes at 10 Gb/s: 881.6 ns, rounded up to 882 per segment.
  EXPECT_EQ(t, 19u * 882);
}

TEST(TcpAllocation, TcpTakesOverFromTheRateWhenItLapses) {
  TcpParams p;
  p.init_cwnd_segments = 2;
  TcpSender tx(p, context(), flow(1'000'000));
  tx.set_allocation(0, 5'000'000'000, 1 * kMs);
  EXPECT_EQ(tx.timer_due_ns(), 1 * kMs);  // before any RTO: nothing sent yet
  tx.on_timer(1 * kMs);
  EXPECT_FALSE(tx.allocated());
  // cwnd = 5 Gb/s x 8 us (the RTT sample from the base RTT) = 5000 bytes.
  EXPECT_EQ(tx.cwnd_bytes(), 5'000u);
  EXPECT_EQ(tx.counters().timeouts, 0u);
}

TEST(TcpAllocation, IgnoresAnAllocationAlreadyOver) {
  TcpParams p;
  TcpSender tx(p, context(), flow(10'000));
  tx.set_allocation(5'000, 1'000'000'000, 5'000);
  tx.set_allocation(5'000, 0, 9'000);
  EXPECT_FALSE(tx.allocated());
}

}  // namespace
}  // namespace sluice
