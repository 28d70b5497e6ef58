// Go-back-N sender and receiver (lib/emulator/transport/rdma/gbn_sender.h,
// gbn_receiver.h), on a simulated clock. Expected instants and sequence
// numbers are worked out by hand in the comments.

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <memory>
#include <vector>

#include "lib/emulator/transport/flow_transport.h"
#include "lib/emulator/transport/rdma/fixed_rate.h"
#include "lib/emulator/transport/rdma/gbn_params.h"
#include "lib/emulator/transport/rdma/gbn_receiver.h"
#include "lib/emulator/transport/rdma/gbn_sender.h"
#include "lib/emulator/transport/rdma/rate_control.h"
#include "lib/emulator/transport/segment.h"

namespace sluice {
namespace {

// A congestion control whose answers the test sets, recording what it is told.
class StubCc : public RateControl {
 public:
  uint64_t rate = 100'000'000'000;
  uint64_t window = kTransportNever;
  uint64_t timer = kTransportNever;
  int sends = 0, acks = 0, nacks = 0, cnps = 0, timers = 0;
  uint64_t sent_bytes = 0;
  AckInfo last_info;
  Segment last_feedback;
  uint64_t last_now = 0;

  uint64_t rate_bps() const override { return rate; }
  uint64_t window_bytes() const override { return window; }
  void on_send(uint64_t /*now_ns*/, uint32_t bytes) override {
    ++sends;
    sent_bytes += bytes;
  }
  void on_ack(uint64_t now_ns, const Segment& ack, const AckInfo& info) override {
    ++acks;
    last_now = now_ns;
    last_feedback = ack;
    last_info = info;
  }
  void on_nack(uint64_t now_ns, const Segment& nack, const AckInfo& info) override {
    ++nacks;
    last_now = now_ns;
    last_feedback = nack;
    last_info = info;
  }
  void on_cnp(uint64_t now_ns, const Segment& cnp) override {
    ++cnps;
    last_now = now_ns;
    last_feedback = cnp;
  }
  uint64_t timer_due_ns() const override { return timer; }
  void on_timer(uint64_t now_ns) override {
    ++timers;
    last_now = now_ns;
    timer = kTransportNever;
  }
};

struct SenderRig {
  StubCc* cc;
  std::unique_ptr<GbnSender> s;
};

SenderRig make_sender(uint64_t bytes, uint64_t window = kTransportNever, uint64_t start_ns = 0,
                      GbnParams params = GbnParams{}) {
  auto cc = std::make_unique<StubCc>();
  StubCc* raw = cc.get();
  raw->window = window;
  TransportContext ctx;  // 100 Gb/s, 1000 B payload, 78 B header, 24 B overhead
  FlowSpec flow{7, bytes, start_ns};
  return {raw, std::make_unique<GbnSender>(params, ctx, flow, std::move(cc))};
}

Segment ack(uint64_t seq, SegmentKind kind = SegmentKind::kAck) {
  Segment a;
  a.kind = kind;
  a.flow = 7;
  a.seq = seq;
  return a;
}

Segment data(uint64_t seq, uint32_t bytes, uint8_t ecn = kEcnEct0, uint64_t ts = 0) {
  Segment d;
  d.kind = SegmentKind::kData;
  d.flow = 7;
  d.seq = seq;
  d.bytes = bytes;
  d.ecn = ecn;
  d.ts_ns = ts;
  return d;
}

// ---------------------------------------------------------------- sender

// A frame is 1000 + 78 + 24 = 1102 B = 8816 bits; at 100 Gb/s it takes
// 88.16 ns, so the k-th segment (from 0) of a back-to-back flow starts at
// floor(k x 88.16) ns: 0, 88, 176, ..., k = 99 at floor(8727.84) = 8727,
// k = 1000 at exactly 88160 (no drift).
TEST(GbnSender, PacesExactlyWithRemainderCarry) {
  auto r = make_sender(2'000'000);
  std::vector<uint64_t> at;
  for (int k = 0; k <= 1000; ++k) {
    const uint64_t due = r.s->send_due_ns();
    Segment seg;
    ASSERT_TRUE(r.s->send(due, &seg));
    EXPECT_EQ(seg.seq, static_cast<uint64_t>(k) * 1000);
    EXPECT_EQ(seg.bytes, 1000u);
    EXPECT_EQ(seg.ts_ns, due);
    EXPECT_EQ(seg.kind, SegmentKind::kData);
    EXPECT_EQ(seg.flow, 7u);
    at.push_back(due);
  }
  EXPECT_EQ(at[0], 0u);
  EXPECT_EQ(at[1], 88u);
  EXPECT_EQ(at[2], 176u);
  EXPECT_EQ(at[25], 2204u);  // 25 x 88.16 = 2204 exactly
  EXPECT_EQ(at[99], 8727u);
  EXPECT_EQ(at[1000], 88160u);
  EXPECT_EQ(r.cc->sends, 1001);
  EXPECT_EQ(r.s->counters().data_segments, 1001u);
}

TEST(GbnSender, RefusesBeforeItsPacingInstantAndStart) {
  auto r = make_sender(10'000, kTransportNever, 5'000);
  Segment seg;
  EXPECT_EQ(r.s->send_due_ns(), 5'000u);
  EXPECT_FALSE(r.s->send(4'999, &seg));
  ASSERT_TRUE(r.s->send(5'000, &seg));
  EXPECT_EQ(r.s->send_due_ns(), 5'088u);
  EXPECT_FALSE(r.s->send(5'087, &seg));
  EXPECT_TRUE(r.s->send(5'088, &seg));
}

TEST(GbnSender, LastSegmentIsShorterAndNothingIsDueAfterIt) {
  auto r = make_sender(2'500);
  Segment seg;
  ASSERT_TRUE(r.s->send(0, &seg));
  ASSERT_TRUE(r.s->send(88, &seg));
  ASSERT_TRUE(r.s->send(176, &seg));
  EXPECT_EQ(seg.seq, 2'000u);
  EXPECT_EQ(seg.bytes, 500u);
  EXPECT_EQ(r.s->send_due_ns(), kTransportNever);
  EXPECT_EQ(r.cc->sent_bytes, 2'500u);
}

// Halving the rate doubles the gap: 1102 B at 50 Gb/s is 176.32 ns.
TEST(GbnSender, PacesAtTheRateOfEachSegment) {
  auto r = make_sender(100'000);
  Segment seg;
  ASSERT_TRUE(r.s->send(0, &seg));  // gap 88.16 at 100 Gb/s
  r.cc->rate = 50'000'000'000;
  ASSERT_TRUE(r.s->send(88, &seg));  // carry 0.16 ns, rescaled to the new rate
  // 88 + 176.32 + 0.16 = 264.48
  EXPECT_EQ(r.s->send_due_ns(), 264u);
  ASSERT_TRUE(r.s->send(264, &seg));
  // 264.48 + 176.32 = 440.8
  EXPECT_EQ(r.s->send_due_ns(), 440u);
}

TEST(GbnSender, WindowCapsBytesInFlight) {
  auto r = make_sender(100'000, 3'000);
  Segment seg;
  ASSERT_TRUE(r.s->send(0, &seg));
  ASSERT_TRUE(r.s->send(88, &seg));
  ASSERT_TRUE(r.s->send(176, &seg));
  // 3000 B in flight: a fourth 1000 B would exceed the window.
  EXPECT_EQ(r.s->send_due_ns(), kTransportNever);
  EXPECT_FALSE(r.s->send(1'000, &seg));

  r.s->receive(300, ack(1'000));
  EXPECT_EQ(r.cc->acks, 1);
  EXPECT_EQ(r.cc->last_info.acked_bytes, 1'000u);
  EXPECT_EQ(r.cc->last_info.snd_una, 1'000u);
  EXPECT_EQ(r.cc->last_info.snd_nxt, 3'000u);
  EXPECT_EQ(r.s->send_due_ns(), 264u);  // pacing allows it already
  ASSERT_TRUE(r.s->send(300, &seg));
  EXPECT_EQ(seg.seq, 3'000u);
  EXPECT_EQ(r.s->send_due_ns(), kTransportNever);
}

// rdma.window caps a rate-only control (DCQCN, TIMELY) as the congestion
// control's own window does, and the smaller of the two wins.
TEST(GbnSender, ParamsWindowCapsBytesInFlightAndTheSmallerWindowWins) {
  GbnParams p;
  p.window_bytes = 2'000;
  auto r = make_sender(100'000, kTransportNever, 0, p);
  EXPECT_EQ(r.s->window_bytes(), 2'000u);
  Segment seg;
  ASSERT_TRUE(r.s->send(0, &seg));
  ASSERT_TRUE(r.s->send(88, &seg));
  // 2000 B in flight: a third 1000 B would exceed the window.
  EXPECT_EQ(r.s->send_due_ns(), kTransportNever);
  r.s->receive(300, ack(1'000));
  EXPECT_EQ(r.s->send_due_ns(), 176u);
  r.cc->window = 1'500;  // the control's window is now the smaller
  EXPECT_EQ(r.s->window_bytes(), 1'500u);
  EXPECT_EQ(r.s->send_due_ns(), kTransportNever);  // 1000 + 1000 > 1500
}

// rdma.window_follows_rate (ns-3's VAR_WIN): the cap is window x rate /
// line rate, recomputed from the control's current rate, at least 1 byte.
TEST(GbnSender, WindowFollowingTheRateShrinksWithIt) {
  GbnParams p;
  p.window_bytes = 65'000;
  p.window_follows_rate = true;
  auto r = make_sender(100'000, kTransportNever, 0, p);
  EXPECT_EQ(r.s->window_bytes(), 65'000u);  // at the 100 Gb/s line rate
  r.cc->rate = 10'000'000'000;              // 65,000 x 10 / 100
  EXPECT_EQ(r.s->window_bytes(), 6'500u);
  r.cc->rate = 3'000'000'000;  // 65,000 x 3 / 100 = 1,950
  EXPECT_EQ(r.s->window_bytes(), 1'950u);
  Segment seg;
  ASSERT_TRUE(r.s->send(0, &seg));
  // 1000 in flight; another 1000 would make 2000 > 1950.
  EXPECT_EQ(r.s->send_due_ns(), kTransportNever);
  r.cc->rate = 1;  // 65,000 / 1e11 rounds to 0: one byte, never none
  EXPECT_EQ(r.s->window_bytes(), 1u);
  r.cc->window = 500;  // the control's own window is smaller still
  EXPECT_EQ(r.s->window_bytes(), 1u);
  r.cc->rate = 100'000'000'000;
  EXPECT_EQ(r.s->window_bytes(), 500u);
  // Without window_follows_rate the same rate leaves the cap fixed.
  p.window_follows_rate = false;
  auto fixed = make_sender(100'000, kTransportNever, 0, p);
  fixed.cc->rate = 10'000'000'000;
  EXPECT_EQ(fixed.s->window_bytes(), 65'000u);
}

TEST(GbnSender, WindowBelowOneSegmentStillSendsOneAtATime) {
  auto r = make_sender(10'000, 500);
  Segment seg;
  ASSERT_TRUE(r.s->send(0, &seg));
  EXPECT_EQ(r.s->send_due_ns(), kTransportNever);
  r.s->receive(1'000, ack(1'000));
  EXPECT_EQ(r.s->send_due_ns(), 88u);
}

// Sent 0..2500 at 0, 88 and 176 (the last 500 B); after the third the
// carry is 0.32 + 48.16 (602 B at 100 Gb/s) -> next at 224.
TEST(GbnSender, NackRewindsToTheExpectedByte) {
  auto r = make_sender(2'500);
  Segment seg;
  ASSERT_TRUE(r.s->send(0, &seg));
  ASSERT_TRUE(r.s->send(88, &seg));
  ASSERT_TRUE(r.s->send(176, &seg));
  r.s->receive(180, ack(2'000, SegmentKind::kNack));
  EXPECT_EQ(r.s->snd_una(), 2'000u);
  EXPECT_EQ(r.s->snd_nxt(), 2'000u);
  EXPECT_EQ(r.s->counters().nacks, 1u);
  EXPECT_EQ(r.cc->nacks, 1);
  EXPECT_EQ(r.cc->last_info.acked_bytes, 2'000u);
  EXPECT_EQ(r.cc->last_info.snd_nxt, 2'000u);
  EXPECT_EQ(r.s->send_due_ns(), 224u);
  ASSERT_TRUE(r.s->send(224, &seg));
  EXPECT_EQ(seg.seq, 2'000u);
  EXPECT_EQ(seg.bytes, 500u);
  EXPECT_EQ(r.s->counters().retransmitted, 1u);
  EXPECT_EQ(r.s->counters().data_segments, 4u);
}

TEST(GbnSender, NackBelowTheCumulativePointRewindsToIt) {
  auto r = make_sender(10'000);
  Segment seg;
  for (uint64_t t : {0, 88, 176, 264}) ASSERT_TRUE(r.s->send(t, &seg));
  r.s->receive(500, ack(3'000));
  r.s->receive(501, ack(1'000, SegmentKind::kNack));
  EXPECT_EQ(r.s->snd_una(), 3'000u);
  EXPECT_EQ(r.s->snd_nxt(), 3'000u);
  EXPECT_EQ(r.cc->last_info.acked_bytes, 0u);
}

TEST(GbnSender, TimeoutRewindsToTheFirstUnacknowledgedByte) {
  auto r = make_sender(100'000, 3'000);
  Segment seg;
  ASSERT_TRUE(r.s->send(0, &seg));
  EXPECT_EQ(r.s->timer_due_ns(), 500'000u);  // first send + rto
  ASSERT_TRUE(r.s->send(88, &seg));
  ASSERT_TRUE(r.s->send(176, &seg));
  EXPECT_EQ(r.s->timer_due_ns(), 500'000u);  // sends are not progress
  r.s->receive(10'000, ack(1'000));
  EXPECT_EQ(r.s->timer_due_ns(), 510'000u);  // progress restarts it
  r.s->receive(20'000, ack(1'000));          // no progress: unchanged
  EXPECT_EQ(r.s->timer_due_ns(), 510'000u);

  r.s->on_timer(509'999);
  EXPECT_EQ(r.s->counters().timeouts, 0u);
  r.s->on_timer(510'000);
  EXPECT_EQ(r.s->counters().timeouts, 1u);
  EXPECT_EQ(r.s->snd_nxt(), 1'000u);
  EXPECT_EQ(r.s->timer_due_ns(), kTransportNever);  // nothing in flight
  EXPECT_EQ(r.s->send_due_ns(), 264u);
  ASSERT_TRUE(r.s->send(510'000, &seg));
  EXPECT_EQ(seg.seq, 1'000u);
  EXPECT_EQ(r.s->counters().retransmitted, 1u);
  EXPECT_EQ(r.s->timer_due_ns(), 1'010'000u);
}

TEST(GbnSender, AckOvertakingARewindIsNotResent) {
  auto r = make_sender(100'000, 3'000);
  Segment seg;
  for (uint64_t t : {0, 88, 176}) ASSERT_TRUE(r.s->send(t, &seg));
  r.s->on_timer(500'000);
  EXPECT_EQ(r.s->snd_nxt(), 0u);
  ASSERT_TRUE(r.s->send(500'000, &seg));
  EXPECT_EQ(seg.seq, 0u);
  r.s->receive(500'100, ack(2'000));  // answers the data sent before the timeout
  EXPECT_EQ(r.s->snd_una(), 2'000u);
  EXPECT_EQ(r.s->snd_nxt(), 2'000u);
  ASSERT_TRUE(r.s->send(500'100, &seg));
  EXPECT_EQ(seg.seq, 2'000u);
}

TEST(GbnSender, ZeroRtoDisablesTheTimeout) {
  GbnParams p;
  p.rto_ns = 0;
  auto r = make_sender(10'000, kTransportNever, 0, p);
  Segment seg;
  ASSERT_TRUE(r.s->send(0, &seg));
  EXPECT_EQ(r.s->timer_due_ns(), kTransportNever);
}

TEST(GbnSender, TimerDueIsTheEarlierOfTimeoutAndCongestionControl) {
  auto r = make_sender(10'000);
  Segment seg;
  ASSERT_TRUE(r.s->send(0, &seg));
  r.cc->timer = 300'000;
  EXPECT_EQ(r.s->timer_due_ns(), 300'000u);
  r.s->on_timer(300'000);
  EXPECT_EQ(r.cc->timers, 1);
  EXPECT_EQ(r.s->counters().timeouts, 0u);
  EXPECT_EQ(r.s->timer_due_ns(), 500'000u);
  r.cc->timer = 700'000;
  EXPECT_EQ(r.s->timer_due_ns(), 500'000u);
}

TEST(GbnSender, CnpAndEcnEchoesGoToTheCongestionControl) {
  auto r = make_sender(10'000);
  Segment seg;
  ASSERT_TRUE(r.s->send(0, &seg));
  Segment cnp;
  cnp.kind = SegmentKind::kCnp;
  cnp.flow = 7;
  r.s->receive(1'000, cnp);
  EXPECT_EQ(r.cc->cnps, 1);
  EXPECT_EQ(r.s->counters().cnps, 1u);
  Segment a = ack(1'000);
  a.ece = true;
  a.ue_echo = true;
  a.ts_ns = 0;
  r.s->receive(2'000, a);
  EXPECT_EQ(r.s->counters().ecn_echoes, 1u);
  EXPECT_TRUE(r.cc->last_feedback.ue_echo);
  EXPECT_EQ(r.cc->last_now, 2'000u);
}

TEST(GbnSender, CompletesWhenTheLastByteIsAcknowledged) {
  auto r = make_sender(2'000);
  Segment seg;
  ASSERT_TRUE(r.s->send(0, &seg));
  ASSERT_TRUE(r.s->send(88, &seg));
  r.s->receive(4'000, ack(1'000));
  EXPECT_EQ(r.s->completed_ns(), 0u);
  r.s->receive(5'000, ack(2'000));
  EXPECT_EQ(r.s->completed_ns(), 5'000u);
  EXPECT_EQ(r.s->send_due_ns(), kTransportNever);
  r.cc->timer = 6'000;
  EXPECT_EQ(r.s->timer_due_ns(), kTransportNever);
  r.s->receive(6'000, ack(2'000));
  EXPECT_EQ(r.s->completed_ns(), 5'000u);
}

TEST(GbnSender, ReportsTheCongestionControlsRateAndWindow) {
  auto r = make_sender(2'000, 12'345);
  r.cc->rate = 7'000'000'000;
  EXPECT_EQ(r.s->rate_bps(), 7'000'000'000u);
  EXPECT_EQ(r.s->window_bytes(), 12'345u);
}

// -------------------------------------------------------------- receiver

GbnReceiver make_receiver(uint64_t bytes, GbnParams p = GbnParams{}) {
  TransportContext ctx;
  return GbnReceiver(p, ctx, FlowSpec{7, bytes, 0});
}

TEST(GbnReceiver, AcksInOrderDataEchoingItsMarksAndInt) {
  auto rx = make_receiver(3'000);
  Segment out[FlowReceiver::kMaxReplies];
  Segment d = data(0, 1'000, kEcnEct0, 123);
  d.int_hops = 2;
  d.hops[0].qlen_bytes = 4'000;
  d.hops[1].tx_bytes = 99;
  d.hops[1].rate_mbps = 100'000;
  ASSERT_EQ(rx.receive(200, d, out), 1u);
  EXPECT_EQ(out[0].kind, SegmentKind::kAck);
  EXPECT_EQ(out[0].flow, 7u);
  EXPECT_EQ(out[0].seq, 1'000u);
  EXPECT_EQ(out[0].ts_ns, 123u);
  EXPECT_FALSE(out[0].ece);
  EXPECT_FALSE(out[0].ue_echo);
  EXPECT_EQ(out[0].int_hops, 2);
  EXPECT_EQ(out[0].hops[0].qlen_bytes, 4'000u);
  EXPECT_EQ(out[0].hops[1].tx_bytes, 99u);
  EXPECT_EQ(out[0].hops[1].rate_mbps, 100'000u);
  EXPECT_EQ(rx.delivered_bytes(), 1'000u);

  ASSERT_EQ(rx.receive(300, data(1'000, 1'000, kEcnUe), out), 1u);
  EXPECT_TRUE(out[0].ue_echo);
  EXPECT_FALSE(out[0].ece);

  GbnParams no_cnp;
  no_cnp.cnp_interval_ns = 0;
  auto rx2 = make_receiver(3'000, no_cnp);
  ASSERT_EQ(rx2.receive(300, data(0, 1'000, kEcnCe), out), 1u);
  EXPECT_TRUE(out[0].ece);
  EXPECT_FALSE(out[0].ue_echo);
}

// ack_every = 4 over ten segments: ACKs after the 4th (4000), the 8th
// (8000) and the 10th (10000, the flow's last byte).
TEST(GbnReceiver, CoalescesAcksAndAlwaysAcksTheLastByte) {
  GbnParams p;
  p.ack_every = 4;
  auto rx = make_receiver(10'000, p);
  Segment out[FlowReceiver::kMaxReplies];
  std::vector<uint64_t> acked;
  for (uint64_t k = 0; k < 10; ++k) {
    const uint32_t n = rx.receive(k * 100, data(k * 1'000, 1'000), out);
    ASSERT_LE(n, 1u);
    if (n == 1) {
      EXPECT_EQ(out[0].kind, SegmentKind::kAck);
      acked.push_back(out[0].seq);
    }
  }
  EXPECT_EQ(acked, (std::vector<uint64_t>{4'000, 8'000, 10'000}));
}

TEST(GbnReceiver, NacksOncePerGapThenAcksResume) {
  auto rx = make_receiver(10'000);
  Segment out[FlowReceiver::kMaxReplies];
  ASSERT_EQ(rx.receive(0, data(0, 1'000), out), 1u);  // ACK 1000
  // 1000..2000 lost.
  ASSERT_EQ(rx.receive(100, data(2'000, 1'000), out), 1u);
  EXPECT_EQ(out[0].kind, SegmentKind::kNack);
  EXPECT_EQ(out[0].seq, 1'000u);
  EXPECT_TRUE(rx.in_gap());
  EXPECT_EQ(rx.receive(200, data(3'000, 1'000), out), 0u);  // same gap: silent
  EXPECT_EQ(rx.receive(300, data(4'000, 1'000), out), 0u);
  EXPECT_EQ(rx.delivered_bytes(), 1'000u);
  // The resend arrives: ACKs resume.
  ASSERT_EQ(rx.receive(400, data(1'000, 1'000), out), 1u);
  EXPECT_EQ(out[0].kind, SegmentKind::kAck);
  EXPECT_EQ(out[0].seq, 2'000u);
  EXPECT_FALSE(rx.in_gap());
  ASSERT_EQ(rx.receive(500, data(2'000, 1'000), out), 1u);
  EXPECT_EQ(out[0].kind, SegmentKind::kAck);
  EXPECT_EQ(out[0].seq, 3'000u);
  // A new gap is NACKed again.
  ASSERT_EQ(rx.receive(600, data(5'000, 1'000), out), 1u);
  EXPECT_EQ(out[0].kind, SegmentKind::kNack);
  EXPECT_EQ(out[0].seq, 3'000u);
  EXPECT_EQ(rx.nacks_sent(), 2u);
}

TEST(GbnReceiver, NacksEveryOutOfOrderSegmentWhenAsked) {
  GbnParams p;
  p.nack_once_per_gap = false;
  auto rx = make_receiver(10'000, p);
  Segment out[FlowReceiver::kMaxReplies];
  for (uint64_t seq : {2'000, 3'000, 4'000}) {
    ASSERT_EQ(rx.receive(seq, data(seq, 1'000), out), 1u);
    EXPECT_EQ(out[0].kind, SegmentKind::kNack);
    EXPECT_EQ(out[0].seq, 0u);
  }
}

TEST(GbnReceiver, AnswersDuplicatesWithAnAck) {
  GbnParams p;
  p.ack_every = 8;
  auto rx = make_receiver(10'000, p);
  Segment out[FlowReceiver::kMaxReplies];
  EXPECT_EQ(rx.receive(0, data(0, 1'000), out), 0u);
  EXPECT_EQ(rx.receive(100, data(1'000, 1'000), out), 0u);
  ASSERT_EQ(rx.receive(200, data(0, 1'000), out), 1u);
  EXPECT_EQ(out[0].kind, SegmentKind::kAck);
  EXPECT_EQ(out[0].seq, 2'000u);
  EXPECT_EQ(rx.delivered_bytes(), 2'000u);
}

// N = 50 us: CE data at 0 causes a CNP; at 10 us and 49.999 us none; at
// exactly 50 us one again; not-CE data none.
TEST(GbnReceiver, SendsAtMostOneCnpPerInterval) {
  auto rx = make_receiver(100'000);
  Segment out[FlowReceiver::kMaxReplies];
  ASSERT_EQ(rx.receive(0, data(0, 1'000, kEcnCe, 5), out), 2u);
  EXPECT_EQ(out[0].kind, SegmentKind::kAck);
  EXPECT_TRUE(out[0].ece);
  EXPECT_EQ(out[1].kind, SegmentKind::kCnp);
  EXPECT_EQ(out[1].flow, 7u);
  ASSERT_EQ(rx.receive(10'000, data(1'000, 1'000, kEcnCe), out), 1u);
  ASSERT_EQ(rx.receive(49'999, data(2'000, 1'000, kEcnCe), out), 1u);
  ASSERT_EQ(rx.receive(50'000, data(3'000, 1'000, kEcnCe), out), 2u);
  EXPECT_EQ(out[1].kind, SegmentKind::kCnp);
  ASSERT_EQ(rx.receive(200'000, data(4'000, 1'000, kEcnEct0), out), 1u);
  ASSERT_EQ(rx.receive(200'001, data(5'000, 1'000, kEcnUe), out), 1u);
  EXPECT_EQ(rx.cnps_sent(), 2u);
}

TEST(GbnReceiver, CnpAlsoForOutOfOrderAndSilentData) {
  auto rx = make_receiver(100'000);
  Segment out[FlowReceiver::kMaxReplies];
  ASSERT_EQ(rx.receive(0, data(2'000, 1'000, kEcnCe), out), 2u);
  EXPECT_EQ(out[0].kind, SegmentKind::kNack);
  EXPECT_EQ(out[1].kind, SegmentKind::kCnp);
  // Same gap (no NACK) but a new interval: the CNP alone.
  ASSERT_EQ(rx.receive(60'000, data(3'000, 1'000, kEcnCe), out), 1u);
  EXPECT_EQ(out[0].kind, SegmentKind::kCnp);
}

TEST(GbnReceiver, ZeroIntervalDisablesCnps) {
  GbnParams p;
  p.cnp_interval_ns = 0;
  auto rx = make_receiver(10'000, p);
  Segment out[FlowReceiver::kMaxReplies];
  EXPECT_EQ(rx.receive(0, data(0, 1'000, kEcnCe), out), 1u);
  EXPECT_EQ(rx.cnps_sent(), 0u);
}

// ----------------------------------------------------------- end to end

// Sender and receiver over a path of 2 us each way; the first copy of the
// segment at 5000 is lost. By hand: segment k goes at floor(k x 88.16);
// segment 5 at 440 is lost; segment 6 (at 528) reaches the receiver at
// 2528, which NACKs 5000; the NACK arrives at 4528. All 20 segments went by
// 1675, so the sender resends 5..19 (15 segments) from 4528, the carry
// being 0.2 ns then: the j-th resend at 4528 + floor(0.2 + 88.16 j), the
// last (j = 14) at 5762; its ACK arrives at 5762 + 4000 = 9762.
TEST(GbnEndToEnd, RecoversALossWithOneNack) {
  auto cc = std::make_unique<FixedRate>(TransportContext{}, FixedRate::kNoWindow);
  GbnParams p;
  TransportContext ctx;
  FlowSpec flow{7, 20'000, 0};
  GbnSender tx(p, ctx, flow, std::move(cc));
  GbnReceiver rx(p, ctx, flow);
  constexpr uint64_t kDelay = 2'000;

  std::multimap<uint64_t, Segment> to_rx, to_tx;
  bool dropped = false;
  uint64_t now = 0;
  std::vector<uint64_t> resend_at;
  for (int step = 0; step < 10'000 && tx.completed_ns() == 0; ++step) {
    uint64_t next = std::min(tx.send_due_ns(), tx.timer_due_ns());
    if (!to_rx.empty()) next = std::min(next, to_rx.begin()->first);
    if (!to_tx.empty()) next = std::min(next, to_tx.begin()->first);
    ASSERT_NE(next, kTransportNever);
    now = std::max(now, next);
    while (!to_rx.empty() && to_rx.begin()->first <= now) {
      Segment out[FlowReceiver::kMaxReplies];
      const uint32_t n = rx.receive(now, to_rx.begin()->second, out);
      to_rx.erase(to_rx.begin());
      for (uint32_t i = 0; i < n; ++i) to_tx.emplace(now + kDelay, out[i]);
    }
    while (!to_tx.empty() && to_tx.begin()->first <= now) {
      tx.receive(now, to_tx.begin()->second);
      to_tx.erase(to_tx.begin());
    }
    if (tx.timer_due_ns() <= now) tx.on_timer(now);
    Segment seg;
    if (tx.send_due_ns() <= now && tx.send(now, &seg)) {
      if (seg.seq == 5'000 && !dropped) {
        dropped = true;
        EXPECT_EQ(now, 440u);
        continue;
      }
      if (tx.counters().retransmitted > 0) resend_at.push_back(now);
      to_rx.emplace(now + kDelay, seg);
    }
  }
  EXPECT_EQ(tx.completed_ns(), 9'762u);
  EXPECT_EQ(rx.delivered_bytes(), 20'000u);
  EXPECT_EQ(tx.counters().nacks, 1u);
  EXPECT_EQ(tx.counters().retransmitted, 15u);
  EXPECT_EQ(tx.counters().timeouts, 0u);
  EXPECT_EQ(rx.nacks_sent(), 1u);
  ASSERT_EQ(resend_at.size(), 15u);
  EXPECT_EQ(resend_at.front(), 4'528u);
  EXPECT_EQ(resend_at[1], 4'616u);  // 4528 + floor(88.36)
  EXPECT_EQ(resend_at.back(), 5'762u);
}

}  // namespace
}  // namespace sluice
