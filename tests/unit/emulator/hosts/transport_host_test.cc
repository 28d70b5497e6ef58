#include "lib/emulator/hosts/transport_host.h"

#include <gtest/gtest.h>

#include <vector>

namespace sluice {
namespace {

// A sender that sends `bytes` in 1000-byte segments no closer than 100 ns
// apart and is done when the last byte is acknowledged; a receiver that
// acknowledges every segment.
class PacedSender : public FlowSender {
 public:
  explicit PacedSender(const FlowSpec& f) : f_(f), next_(f.start_ns) {}
  bool send(uint64_t now, Segment* out) override {
    if (nxt_ >= f_.bytes || now < next_) return false;
    out->kind = SegmentKind::kData;
    out->flow = f_.id;
    out->seq = nxt_;
    out->bytes = static_cast<uint32_t>(std::min<uint64_t>(1000, f_.bytes - nxt_));
    out->ts_ns = now;
    nxt_ += out->bytes;
    next_ = now + 100;
    ++counters_.data_segments;
    return true;
  }
  uint64_t send_due_ns() const override { return nxt_ >= f_.bytes ? kTransportNever : next_; }
  void receive(uint64_t now, const Segment& s) override {
    if (s.seq >= f_.bytes && done_ == 0) done_ = now;
  }
  uint64_t timer_due_ns() const override { return kTransportNever; }
  void on_timer(uint64_t) override {}
  uint64_t completed_ns() const override { return done_; }
  uint64_t rate_bps() const override { return 0; }
  uint64_t window_bytes() const override { return kTransportNever; }
  const SenderCounters& counters() const override { return counters_; }

 private:
  FlowSpec f_;
  uint64_t nxt_ = 0, next_, done_ = 0;
  SenderCounters counters_;
};

class AckAll : public FlowReceiver {
 public:
  uint32_t receive(uint64_t, const Segment& d, Segment* out) override {
    got_ += d.bytes;
    out[0].kind = SegmentKind::kAck;
    out[0].flow = d.flow;
    out[0].seq = got_;
    out[0].ts_ns = d.ts_ns;
    return 1;
  }
  uint64_t delivered_bytes() const override { return got_; }

 private:
  uint64_t got_ = 0;
};

class Maker : public TransportMaker {
 public:
  std::unique_ptr<FlowSender> sender(const FlowSpec& f) const override {
    return std::make_unique<PacedSender>(f);
  }
  std::unique_ptr<FlowReceiver> receiver(const FlowSpec&) const override {
    return std::make_unique<AckAll>();
  }
};

struct Emitted {
  Segment s;
  uint32_t dst;
  uint32_t tag;
};

class Collect : public SegmentSink {
 public:
  bool emit(const Segment& s, uint32_t dst, uint32_t tag) override {
    if (out.size() >= room) return false;
    out.push_back({s, dst, tag});
    return true;
  }
  std::vector<Emitted> out;
  size_t room = 1000;
};

constexpr uint32_t kA = 0x0A000001, kB = 0x0A000002, kC = 0x0A000003;

std::vector<FlowListEntry> flows() {
  return {{7, kA, kB, 2500, 1000, false, 2}, {9, kC, kA, 10, 0, true, 3}};
}

TEST(TransportHost, TakesItsOwnFlows) {
  Maker m;
  TransportHost a(kA, flows(), m);
  a.start(50);
  EXPECT_EQ(a.senders(), 1u);
  EXPECT_EQ(a.receivers(), 1u);
  // The first flow starts at run start 50 + its 1000 ns.
  EXPECT_EQ(a.next_due_ns(), 1050u);
}

TEST(TransportHost, OneSegmentPerFlowWaitsInTheNic) {
  Maker m;
  TransportHost a(kA, flows(), m);
  a.start(0);
  Collect nic;
  a.poll(999, nic);
  EXPECT_TRUE(nic.out.empty());
  a.poll(1000, nic);
  ASSERT_EQ(nic.out.size(), 1u);
  EXPECT_EQ(nic.out[0].dst, kB);
  EXPECT_EQ(nic.out[0].s.seq, 0u);
  // Paced for 1100, but its first segment has not left the NIC: nothing due.
  EXPECT_EQ(a.next_due_ns(), kTransportNever);
  a.poll(1100, nic);
  EXPECT_EQ(nic.out.size(), 1u);
  a.sent(nic.out[0].tag, 1080);
  EXPECT_EQ(a.next_due_ns(), 1100u);
  a.poll(1100, nic);
  ASSERT_EQ(nic.out.size(), 2u);
  EXPECT_EQ(nic.out[1].s.seq, 1000u);
}

// A segment the sender has counted as sent, refused by a full NIC, is held
// and goes first when a departure makes room: none is lost.
TEST(TransportHost, ASegmentAFullNicRefusedIsHeldNotLost) {
  Maker m;
  TransportHost a(kA, flows(), m);
  a.start(0);
  Collect nic;
  nic.room = 0;
  a.poll(1000, nic);
  EXPECT_TRUE(nic.out.empty());
  EXPECT_EQ(a.counters().nic_full, 1u);
  EXPECT_EQ(a.next_due_ns(), kTransportNever);  // waits for the NIC
  nic.room = 5;
  a.sent(TransportHost::kReplyTag, 1050);  // a reply left: room again
  EXPECT_EQ(a.next_due_ns(), 1000u);       // the held segment is due
  a.poll(1050, nic);
  ASSERT_EQ(nic.out.size(), 1u);
  EXPECT_EQ(nic.out[0].s.seq, 0u);  // the segment the sender counted, not the next one
  EXPECT_EQ(a.counters().data_sent, 1u);
  a.sent(nic.out[0].tag, 1100);
  a.poll(1100, nic);
  ASSERT_EQ(nic.out.size(), 2u);
  EXPECT_EQ(nic.out[1].s.seq, 1000u);
}

TEST(TransportHost, FlowCompletesAtTheAckOfItsLastByte) {
  Maker m;
  TransportHost a(kA, flows(), m);
  a.start(0);
  TransportHost b(kB, flows(), m);
  b.start(0);
  Collect nic_a, nic_b;
  // Segments cross a 40 ns "fabric"; ACKs come back the same way.
  uint64_t now = 1000;
  for (int step = 0; step < 3; ++step) {
    a.poll(now, nic_a);
    ASSERT_EQ(nic_a.out.size(), size_t(step + 1));
    const Emitted e = nic_a.out.back();
    a.sent(e.tag, now);
    b.receive(now + 40, e.s);
    b.poll(now + 40, nic_b);
    ASSERT_EQ(nic_b.out.size(), size_t(step + 1));
    // The ACK of the last byte is tagged so that its departure is noted.
    const uint32_t tag = nic_b.out.back().tag;
    EXPECT_TRUE(TransportHost::is_reply(tag));
    EXPECT_EQ(tag, step == 2 ? TransportHost::kFinalAckTag : TransportHost::kReplyTag);
    EXPECT_EQ(nic_b.out.back().dst, kA);
    b.sent(tag, now + 50);
    a.receive(now + 80, nic_b.out.back().s);
    now += 100;
  }
  EXPECT_EQ(nic_a.out[2].s.bytes, 500u);
  EXPECT_TRUE(a.all_done());
  std::vector<FlowOutcome> o;
  a.outcomes(&o);
  ASSERT_EQ(o.size(), 1u);
  EXPECT_EQ(o[0].id, 7u);
  EXPECT_EQ(o[0].completed_ns, 1200u + 80);  // the third ACK
  EXPECT_EQ(a.counters().data_sent, 3u);
  EXPECT_EQ(b.counters().replies_sent, 3u);
  EXPECT_EQ(a.next_due_ns(), kTransportNever);  // done flows leave the calendar
  // The FCT's parts (transport_report.cc): sent 1200, arrived 1240, its
  // ACK left 1250 and reached the sender 1280.
  std::vector<FlowReceipt> r;
  b.receipts(&r);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].sent_ns, 1200u);
  EXPECT_EQ(r[0].arrived_ns, 1240u);
  EXPECT_EQ(r[0].acked_ns, 1250u);
}

TEST(TransportHost, StrayFramesAreCounted) {
  Maker m;
  TransportHost a(kA, flows(), m);
  a.start(0);
  Segment s;
  s.kind = SegmentKind::kData;
  s.flow = 1234;
  a.receive(10, s);
  s.kind = SegmentKind::kAck;
  a.receive(10, s);
  EXPECT_EQ(a.counters().stray, 2u);
}

TEST(TransportHost, AFullNicHoldsRepliesUntilRoom) {
  Maker m;
  TransportHost b(kB, flows(), m);
  b.start(0);
  Segment d;
  d.kind = SegmentKind::kData;
  d.flow = 7;
  d.bytes = 1000;
  b.receive(5, d);
  b.receive(6, d);
  Collect nic;
  nic.room = 1;
  b.poll(6, nic);
  EXPECT_EQ(nic.out.size(), 1u);
  // A reply still waits, but the NIC refused it: the host waits for a
  // departure (due "now" would spin at this instant while the NIC is paused).
  EXPECT_EQ(b.next_due_ns(), kTransportNever);
  b.poll(6, nic);  // polled again anyway: still refused, still waiting
  EXPECT_EQ(nic.out.size(), 1u);
  EXPECT_EQ(b.next_due_ns(), kTransportNever);
  b.sent(TransportHost::kReplyTag, 7);  // the first ACK left the NIC
  EXPECT_EQ(b.next_due_ns(), 0u);       // the waiting reply is due at once
  nic.room = 5;
  b.poll(7, nic);
  EXPECT_EQ(nic.out.size(), 2u);
  EXPECT_EQ(nic.out[1].s.seq, 2000u);
}

// The receipt names the segment that completed the flow's bytes, whichever
// it is: here the first segment arrives last (it filled the hole), and a
// duplicate after that changes nothing.
TEST(TransportHost, ReceiptIsTheSegmentThatCompletedTheBytes) {
  Maker m;
  TransportHost b(kB, flows(), m);  // receives flow 7 (2500 bytes) from kA
  b.start(100);
  auto data = [](uint64_t seq, uint32_t bytes, uint64_t sent) {
    Segment s;
    s.kind = SegmentKind::kData;
    s.flow = 7;
    s.seq = seq;
    s.bytes = bytes;
    s.ts_ns = sent;
    return s;
  };
  std::vector<FlowReceipt> r;
  b.receive(3000, data(1000, 1000, 2000));
  b.receive(3100, data(2000, 500, 2100));
  b.receipts(&r);
  EXPECT_TRUE(r.empty());  // 1500 of 2500 bytes
  b.receive(3500, data(0, 1000, 2400));
  b.receive(3600, data(0, 1000, 2450));
  b.receipts(&r);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].id, 7u);
  EXPECT_EQ(r[0].sent_ns, 2400u - 100u);  // relative to the run's start
  EXPECT_EQ(r[0].arrived_ns, 3500u - 100u);
}

}  // namespace
}  // namespace sluice
