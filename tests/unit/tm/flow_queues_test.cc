// Queueing by flow: SFQ's shares with and without collisions, FQ's queue
// per flow, DRR's byte fairness across packet sizes, CoDel inside, and the
// egress port around them (buffer, shaper, pauses, drops and marks).
#include "lib/tm/flow_queues/flow_queues.h"

#include <gtest/gtest.h>

#include <bit>
#include <map>
#include <vector>

#include "lib/tm/egress_port.h"

namespace sluice {
namespace {

constexpr uint64_t kMs = 1'000'000;

TmPacket packet(uint32_t bytes, uintptr_t id = 0) {
  TmPacket p;
  p.bytes = bytes;
  p.handle = reinterpret_cast<void*>(id);
  return p;
}

FlowQueueingConfig sfq(uint32_t queues) {
  FlowQueueingConfig c;
  c.kind = QueueingKind::kSfq;
  c.sfq_queues = queues;
  c.quantum_bytes = 1600;
  return c;
}

FlowQueueingConfig fq() {
  FlowQueueingConfig c;
  c.kind = QueueingKind::kFairQueue;
  c.quantum_bytes = 1600;
  return c;
}

// Pops everything in bursts of 32 (no shaper); returns the flows in order.
std::vector<TmPacket> pop_all(FlowQueues& q, uint64_t now = 0) {
  std::vector<TmPacket> all;
  TmPacket out[32], dropped[32];
  for (;;) {
    int64_t budget = INT64_MAX / 2;
    const FlowQueues::Popped r = q.pop(now, out, 32, &budget, 24, dropped, 32);
    if (r.sent == 0) break;
    all.insert(all.end(), out, out + r.sent);
  }
  return all;
}

// Bytes each flow (handle = flow) got among the first `n` packets popped.
std::map<uintptr_t, uint64_t> bytes_in_first(const std::vector<TmPacket>& v, size_t n) {
  std::map<uintptr_t, uint64_t> got;
  for (size_t i = 0; i < n && i < v.size(); ++i)
    got[reinterpret_cast<uintptr_t>(v[i].handle)] += v[i].bytes;
  return got;
}

TEST(FlowQueues, SfqGivesFlowsInDifferentQueuesEqualBytesWhateverTheirPacketSizes) {
  FlowQueues q(sfq(8), 1500);
  // Flow 1 (queue 1) sends 1500-byte packets, flow 2 (queue 2) 100-byte ones.
  for (int i = 0; i < 200; ++i) q.push(0, 1, packet(1500, 1), false);
  for (int i = 0; i < 3000; ++i) q.push(0, 2, packet(100, 2), false);
  const auto all = pop_all(q);
  ASSERT_EQ(all.size(), 3200u);
  // While both are backlogged (flow 1's 300 KB last), their bytes differ
  // by at most one quantum and one packet at every point.
  uint64_t a = 0, b = 0;
  for (const TmPacket& p : all) {
    (reinterpret_cast<uintptr_t>(p.handle) == 1 ? a : b) += p.bytes;
    if (a < 200 * 1500 && b < 3000 * 100) {
      EXPECT_LE(a > b ? a - b : b - a, 1600u + 1500u);
    }
  }
}

TEST(FlowQueues, SfqFlowsThatCollideShareOneQueuesShare) {
  FlowQueues q(sfq(4), 1500);
  // Flows 1 and 5 hash to queue 1 (mod 4); flow 2 has queue 2 to itself.
  for (int i = 0; i < 400; ++i) {
    q.push(0, 1, packet(1500, 1), false);
    q.push(0, 5, packet(1500, 5), false);
    q.push(0, 2, packet(1500, 2), false);
  }
  EXPECT_EQ(q.queue_of(1), q.queue_of(5));
  EXPECT_NE(q.queue_of(1), q.queue_of(2));
  EXPECT_GT(q.collisions(), 0u);
  const auto got = bytes_in_first(pop_all(q), 400);
  // Queue 2 gets half the link; flows 1 and 5 a quarter each.
  EXPECT_NEAR(double(got.at(2)) / (400 * 1500), 0.5, 0.01);
  EXPECT_NEAR(double(got.at(1)) / (400 * 1500), 0.25, 0.01);
  EXPECT_NEAR(double(got.at(5)) / (400 * 1500), 0.25, 0.01);
}

TEST(FlowQueues, FqGivesEveryFlowItsOwnQueueAndGivesItBack) {
  FlowQueues q(fq(), 1500);
  // 300 flows whose hashes would collide in any SFQ of up to 64 queues.
  for (int round = 0; round < 4; ++round)
    for (uint64_t f = 0; f < 300; ++f) q.push(0, f << 20, packet(1000, f), false);
  EXPECT_EQ(q.active_queues(), 300u);
  EXPECT_EQ(q.packets(), 1200u);
  EXPECT_EQ(q.collisions(), 0u);
  const auto all = pop_all(q);
  ASSERT_EQ(all.size(), 1200u);
  // Round robin: each flow's first packet before any flow's second.
  const auto first = bytes_in_first(all, 300);
  EXPECT_EQ(first.size(), 300u);
  EXPECT_TRUE(q.empty());
  EXPECT_EQ(q.active_queues(), 0u);
  // The queues were given back: the same flows again reuse them.
  const uint64_t allocated = q.queues_allocated();
  for (uint64_t f = 0; f < 300; ++f) q.push(0, f << 20, packet(1000, f), false);
  EXPECT_EQ(q.queues_allocated(), allocated);
  EXPECT_EQ(pop_all(q).size(), 300u);
}

TEST(FlowQueues, AShortFlowIsServedAheadOfALongFlowsBacklog) {
  // SFQ's isolation: a 3-packet flow arriving behind 1000 packets of a long
  // flow leaves within its first three rounds, not after the backlog.
  FlowQueues q(sfq(64), 1500);
  for (int i = 0; i < 1000; ++i) q.push(0, 7, packet(1500, 7), false);
  for (int i = 0; i < 3; ++i) q.push(0, 9, packet(1500, 9), false);
  const auto all = pop_all(q);
  size_t last_short = 0;
  for (size_t i = 0; i < all.size(); ++i)
    if (reinterpret_cast<uintptr_t>(all[i].handle) == 9) last_short = i;
  EXPECT_LE(last_short, 6u);
}

TEST(FlowQueues, PopStopsWhenTheBudgetGoesNegative) {
  FlowQueues q(sfq(4), 1500);
  for (int i = 0; i < 10; ++i) q.push(0, 1, packet(1000, 1), false);
  TmPacket out[32], dropped[4];
  int64_t budget = 2500;  // room for 3 frames of 1024 wire bytes (the third takes it negative)
  const FlowQueues::Popped r = q.pop(0, out, 32, &budget, 24, dropped, 4);
  EXPECT_EQ(r.sent, 3u);
  EXPECT_EQ(budget, 2500 - 3 * 1024);
  EXPECT_EQ(q.packets(), 7u);
}

TEST(FlowQueues, CodelInEachQueueDropsOnlyTheStandingOne) {
  FlowQueueingConfig c = sfq(4);
  c.codel = true;
  c.codel_target_ns = 1 * kMs;
  c.codel_interval_ns = 10 * kMs;
  FlowQueues q(c, 1500);
  // Flow 1 keeps a standing queue of 50 packets; flow 2 sends one packet
  // now and then, which never waits.
  uint64_t sent1 = 0, sent2 = 0, dropped1 = 0, dropped2 = 0;
  TmPacket out[2], dropped[8];
  for (int i = 0; i < 50; ++i) q.push(0, 1, packet(1500, 1), false);
  for (uint64_t t = 0; t < 200; ++t) {
    const uint64_t now = t * 100'000;  // every 100 us
    q.push(now, 1, packet(1500, 1), false);
    if (t % 10 == 0) q.push(now, 2, packet(1500, 2), false);
    int64_t budget = 1500 + 24 - 1;  // one frame per call
    const FlowQueues::Popped r = q.pop(now, out, 2, &budget, 24, dropped, 8);
    for (unsigned i = 0; i < r.sent; ++i)
      (reinterpret_cast<uintptr_t>(out[i].handle) == 1 ? sent1 : sent2)++;
    for (unsigned i = 0; i < r.dropped; ++i)
      (reinterpret_cast<uintptr_t>(dropped[i].handle) == 1 ? dropped1 : dropped2)++;
  }
  EXPECT_GT(dropped1, 0u);
  EXPECT_EQ(dropped2, 0u);
  EXPECT_EQ(q.codel_drops(), dropped1);
  EXPECT_EQ(sent2, 20u);
}

TEST(FlowQueues, CodelDropsBeyondTheDropListAreSentNotLost) {
  // A deep standing queue served rarely: the control law then wants several
  // drops per dequeue, more than a one-slot drop list holds. Every packet
  // must still be sent, handed back as dropped, or queued.
  FlowQueueingConfig c = sfq(1);
  c.codel = true;
  c.codel_target_ns = 1 * kMs;
  c.codel_interval_ns = 10 * kMs;
  FlowQueues q(c, 1500);
  for (int i = 0; i < 400; ++i) q.push(0, 1, packet(1500, i + 1), false);
  TmPacket out[1], dropped[1];
  uint64_t sent = 0, returned = 0;
  for (uint64_t t = 5; t < 400; t += 10) {
    int64_t budget = INT64_MAX / 2;
    const FlowQueues::Popped r = q.pop(t * kMs, out, 1, &budget, 24, dropped, 1);
    sent += r.sent;
    returned += r.dropped;
    ASSERT_LE(r.dropped, 1u);
    ASSERT_EQ(sent + returned + q.packets(), 400u) << "at " << t << " ms";
    ASSERT_EQ(q.bytes(), q.packets() * 1500);
  }
  EXPECT_GT(returned, 0u);
  EXPECT_EQ(q.codel_drops(), returned);
}

EgressPortConfig flow_port(const FlowQueueingConfig& q) {
  EgressPortConfig cfg;
  cfg.queueing = q;
  cfg.mtu_bytes = 1500;
  return cfg;
}

TEST(EgressPortByFlow, AdmitsByTheFlowsQueueAndReleasesTheBuffer) {
  SharedBuffer buffer(100'000, 1.0);
  EgressPort port(flow_port(sfq(16)), &buffer);
  EXPECT_TRUE(port.queues_by_flow());
  EXPECT_EQ(port.num_queues(), 1u);
  // One flow alone reaches its dynamic threshold: q + b <= 1 x (100 KB - used).
  unsigned admitted = 0;
  for (int i = 0; i < 100; ++i)
    admitted += port.enqueue_flow(0, 3, packet(1000), false).verdict != EnqueueVerdict::kDropped;
  EXPECT_EQ(admitted, 50u);
  EXPECT_EQ(port.queue_stats(0).drops[static_cast<unsigned>(DropReason::kQueueThreshold)].get(),
            50u);
  // Another flow's queue is judged on its own bytes.
  EXPECT_NE(port.enqueue_flow(0, 4, packet(1000), false).verdict, EnqueueVerdict::kDropped);
  EXPECT_EQ(buffer.used(), 51'000u);
  EXPECT_EQ(port.data_queued_bytes(), 51'000u);
  EXPECT_EQ(port.depth_bytes(0), 51'000u);
  std::vector<TmPacket> out(64);
  unsigned total = 0;
  while (unsigned n = port.dequeue_burst(1000, out.data(), 64)) total += n;
  EXPECT_EQ(total, 51u);
  EXPECT_EQ(buffer.used(), 0u);
  EXPECT_EQ(port.queue_stats(0).dequeued_packets.get(), 51u);
  EXPECT_EQ(port.next_event_ns(2000), UINT64_MAX);
}

TEST(EgressPortByFlow, UnlimitedBufferNeverRefuses) {
  SharedBuffer buffer(10'000, 1.0);
  FlowQueueingConfig c = fq();
  c.unlimited_buffer = true;
  EgressPort port(flow_port(c), &buffer);
  for (int i = 0; i < 1000; ++i)
    ASSERT_NE(port.enqueue_flow(0, i % 7, packet(1500), false).verdict, EnqueueVerdict::kDropped);
  EXPECT_EQ(buffer.used(), 0u);  // not charged: it stands outside the shared buffer
  EXPECT_EQ(port.data_queued_bytes(), 1'500'000u);
}

TEST(EgressPortByFlow, HonoursPausesAndTheShaper) {
  SharedBuffer buffer(1 << 20, 1.0);
  EgressPortConfig cfg = flow_port(sfq(8));
  cfg.rate_bps = 8'000'000'000;  // 1 byte per ns
  cfg.burst_bytes = 1524;        // one frame of 1500 + 24
  EgressPort port(cfg, &buffer);
  for (int i = 0; i < 10; ++i) port.enqueue_flow(0, i, packet(1500), false);
  std::vector<TmPacket> out(64);
  port.pause_queue(0, 5000);  // a PFC pause of the port's one class
  EXPECT_EQ(port.dequeue_burst(100, out.data(), 64), 0u);
  EXPECT_EQ(port.next_event_ns(100), 5000u);
  // The bucket starts full with one frame's tokens; a frame may leave while
  // tokens are not negative and take them below zero.
  EXPECT_EQ(port.dequeue_burst(5000, out.data(), 64), 2u);
  EXPECT_EQ(port.dequeue_burst(5000 + 1524, out.data(), 64), 1u);
  port.pause_port(UINT64_MAX);
  EXPECT_EQ(port.dequeue_burst(100'000, out.data(), 64), 0u);
  port.resume_port();
  EXPECT_EQ(port.dequeue_burst(100'000, out.data(), 64), 2u);
}

TEST(EgressPortByFlow, CodelDropsAndMarksReachTheCaller) {
  SharedBuffer buffer(1 << 24, 8.0);
  FlowQueueingConfig c = sfq(4);
  c.codel = true;
  c.codel_target_ns = 1 * kMs;
  c.codel_interval_ns = 10 * kMs;
  for (bool ecn : {false, true}) {
    c.codel_ecn = ecn;
    EgressPort port(flow_port(c), &buffer);
    for (int i = 0; i < 200; ++i) port.enqueue_flow(0, 1, packet(1500, i + 1), true);
    std::vector<TmPacket> out(4);
    uint64_t dropped = 0, marked = 0, sent = 0;
    // One packet every 100 us from 5 ms on: the queue stands above target.
    for (uint64_t t = 50; t < 250; ++t) {
      const unsigned n = port.dequeue_burst(t * 100'000, out.data(), 1);
      const TmPacket* d;
      const unsigned nd = port.dequeue_dropped(&d);
      for (unsigned i = 0; i < nd; ++i) EXPECT_NE(d[i].handle, nullptr);
      dropped += nd;
      marked += std::popcount(port.dequeue_marks());
      sent += n;
      if (n == 0) break;
    }
    if (ecn) {
      EXPECT_EQ(dropped, 0u);
      EXPECT_GT(marked, 0u);
    } else {
      EXPECT_GT(dropped, 0u);
      EXPECT_EQ(marked, 0u);
      EXPECT_EQ(port.queue_stats(0).drops[static_cast<unsigned>(DropReason::kCodel)].get(),
                dropped);
    }
    uint64_t drained = 0;
    port.drain([&](const TmPacket&) { ++drained; });
    EXPECT_EQ(sent + dropped + drained, 200u);
    EXPECT_EQ(buffer.used(), 0u);
  }
}

}  // namespace
}  // namespace sluice

namespace sluice {
namespace {

TEST(EgressPortPfabric, ServesTheSmallestRankAndDropsTheLargestWhenFull) {
  SharedBuffer buffer(1 << 20, 1.0);
  FlowQueueingConfig c;
  c.kind = QueueingKind::kPfabric;
  c.pfabric_buffer_bytes = 4500;  // three 1500-byte frames
  EgressPort port(flow_port(c), &buffer);
  EXPECT_TRUE(port.queues_by_flow());
  EXPECT_TRUE(port.ranked());
  TmPacket evicted[4];
  unsigned n = 9;
  auto put = [&](uintptr_t id, uint64_t flow, uint32_t rank) {
    return port.enqueue_ranked(0, flow, rank, packet(1500, id), evicted, 4, &n);
  };
  EXPECT_EQ(put(1, 10, 500).verdict, EnqueueVerdict::kEnqueued);
  EXPECT_EQ(n, 0u);
  EXPECT_EQ(put(2, 20, 100).verdict, EnqueueVerdict::kEnqueued);
  EXPECT_EQ(put(3, 30, 900).verdict, EnqueueVerdict::kEnqueued);
  // Full: a rank-50 packet evicts the rank-900 one.
  EXPECT_EQ(put(4, 40, 50).verdict, EnqueueVerdict::kEnqueued);
  ASSERT_EQ(n, 1u);
  EXPECT_EQ(evicted[0].handle, reinterpret_cast<void*>(3));
  // A rank-1000 packet is the lowest priority itself: refused.
  const EnqueueResult r = put(5, 50, 1000);
  EXPECT_EQ(r.verdict, EnqueueVerdict::kDropped);
  EXPECT_EQ(r.reason, DropReason::kPriorityDrop);
  EXPECT_EQ(n, 0u);
  EXPECT_EQ(port.queue_stats(0).drops[static_cast<unsigned>(DropReason::kPriorityDrop)].get(), 2u);
  EXPECT_EQ(buffer.used(), 0u);  // pFabric's buffer is the port's own
  EXPECT_EQ(port.depth_bytes(0), 4500u);
  std::vector<TmPacket> out(8);
  port.pause_port(100);
  EXPECT_EQ(port.dequeue_burst(50, out.data(), 8), 0u);
  ASSERT_EQ(port.dequeue_burst(100, out.data(), 8), 3u);
  EXPECT_EQ(out[0].handle, reinterpret_cast<void*>(4));
  EXPECT_EQ(out[1].handle, reinterpret_cast<void*>(2));
  EXPECT_EQ(out[2].handle, reinterpret_cast<void*>(1));
  EXPECT_EQ(port.next_event_ns(200), UINT64_MAX);
  EXPECT_EQ(port.queue_stats(0).dequeued_packets.get(), 3u);
}

}  // namespace
}  // namespace sluice
