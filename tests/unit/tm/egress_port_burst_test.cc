// dequeue_burst takes runs of packets per scheduler pick and publishes its
// tallies once per run or per burst: these tests pin the results to what the
// per-packet model gives, worked out by hand.
#include <gtest/gtest.h>

#include <vector>

#include "lib/tm/egress_port.h"

namespace sluice {
namespace {

TmPacket packet(uint32_t bytes, uint16_t aux = 0) {
  TmPacket p;
  p.bytes = bytes;
  p.aux = aux;
  return p;
}

EgressPortConfig config(uint32_t queues, uint32_t capacity = 64) {
  EgressPortConfig cfg;
  cfg.num_queues = queues;
  cfg.queue_capacity = capacity;
  cfg.control_capacity = 4;
  return cfg;
}

std::vector<TmPacket> take(EgressPort& port, uint64_t now, unsigned max = 64) {
  std::vector<TmPacket> out(max);
  out.resize(port.dequeue_burst(now, out.data(), max));
  return out;
}

std::vector<int> queues_of(const std::vector<TmPacket>& v) {
  std::vector<int> q;
  for (const TmPacket& p : v) q.push_back(p.queue);
  return q;
}

TEST(EgressPortBurst, ResidenceOfMixedEnqueueTimesInOneBurst) {
  SharedBuffer buffer(1 << 20, 1.0);
  EgressPort port(config(1), &buffer);
  // Left at 1000: residences 1000, 100, 1000, 0, 950, 950.
  for (uint64_t t : {0, 900, 0, 1000, 50, 50}) port.enqueue(t, 0, packet(100), false);
  EXPECT_EQ(take(port, 1000).size(), 6u);
  const LatencyHistogram& h = port.residence();
  EXPECT_EQ(h.total(), 6u);
  EXPECT_EQ(h.sum_ns(), 1000u + 100 + 1000 + 0 + 950 + 950);
  EXPECT_EQ(h.count(0), 2u);  // 100 and 0: <= 100
  EXPECT_EQ(h.count(4), 4u);  // 1000, 1000, 950, 950: in (800, 1600]
  EXPECT_EQ(h.cumulative_count(LatencyHistogram::kBuckets - 1), 6u);
  // A second burst adds to the same histogram.
  port.enqueue(2000, 0, packet(100), false);
  port.enqueue(2000, 0, packet(100), false);
  EXPECT_EQ(take(port, 2300).size(), 2u);  // 300 each: (200, 400]
  EXPECT_EQ(h.total(), 8u);
  EXPECT_EQ(h.sum_ns(), 4000u + 600);
  EXPECT_EQ(h.count(2), 2u);
}

TEST(EgressPortBurst, DrrOrderMatchesThePacketByPacketRounds) {
  SharedBuffer buffer(1 << 20, 8.0);
  EgressPortConfig cfg = config(2);
  cfg.drr_quantum_bytes = 250;
  EgressPort port(cfg, &buffer);
  for (int i = 0; i < 4; ++i) port.enqueue(0, 0, packet(100), false);
  for (int i = 0; i < 2; ++i) port.enqueue(0, 1, packet(200), false);
  // q0 +250: 100, 100 (50 left); q1 +250: 200 (50 left); q0 +250 = 300:
  // 100, 100 (empty); q1 +250 = 300: 200.
  EXPECT_EQ(queues_of(take(port, 10)), (std::vector<int>{0, 0, 1, 0, 0, 1}));

  // The same rounds cut into bursts of 3 (the deficit carries over).
  for (int i = 0; i < 4; ++i) port.enqueue(20, 0, packet(100), false);
  for (int i = 0; i < 2; ++i) port.enqueue(20, 1, packet(200), false);
  EXPECT_EQ(queues_of(take(port, 30, 3)), (std::vector<int>{0, 0, 1}));
  EXPECT_EQ(port.queue_bytes(0), 200u);
  EXPECT_EQ(port.queue_bytes(1), 200u);
  EXPECT_EQ(queues_of(take(port, 30, 3)), (std::vector<int>{0, 0, 1}));
  EXPECT_EQ(port.queued_packets(), 0u);
}

TEST(EgressPortBurst, RunAcrossTheRingsEndKeepsFifoOrder) {
  SharedBuffer buffer(1 << 20, 8.0);
  EgressPort port(config(1, 8), &buffer);
  for (int i = 0; i < 6; ++i) port.enqueue(0, 0, packet(100), false);
  EXPECT_EQ(take(port, 1).size(), 6u);
  // Ring slots 6, 7, 0, 1, ... 5.
  for (uint16_t i = 0; i < 8; ++i) {
    ASSERT_EQ(port.enqueue(2, 0, packet(100 + i, i), false).verdict, EnqueueVerdict::kEnqueued);
  }
  EXPECT_EQ(port.enqueue(2, 0, packet(100), false).reason, DropReason::kQueueFull);
  auto out = take(port, 3, 64);
  ASSERT_EQ(out.size(), 8u);
  for (uint16_t i = 0; i < 8; ++i) {
    EXPECT_EQ(out[i].aux, i);
    EXPECT_EQ(out[i].bytes, 100u + i);
  }
  EXPECT_EQ(port.queue_stats(0).dequeued_packets.get(), 14u);
  EXPECT_EQ(port.queue_stats(0).dequeued_bytes.get(), 600u + 8 * 100 + 28);
  EXPECT_EQ(buffer.used(), 0u);
}

TEST(EgressPortBurst, StatsDepthAndBufferAreExactAfterEachCall) {
  SharedBuffer buffer(1 << 20, 8.0);
  EgressPort port(config(2), &buffer);
  for (int i = 0; i < 10; ++i) port.enqueue(0, 1, packet(100 + i), false);
  // 100 + ... + 109 = 1045 bytes.
  EXPECT_EQ(take(port, 5, 4).size(), 4u);  // 100..103 = 406 bytes
  EXPECT_EQ(port.queue_bytes(1), 1045u - 406);
  EXPECT_EQ(port.queue_packets(1), 6u);
  EXPECT_EQ(port.queued_bytes(), 1045u - 406);
  EXPECT_EQ(port.data_queued_bytes(), 1045u - 406);
  EXPECT_EQ(buffer.used(), 1045u - 406);
  EXPECT_EQ(port.queue_stats(1).dequeued_packets.get(), 4u);
  EXPECT_EQ(port.queue_stats(1).dequeued_bytes.get(), 406u);
  EXPECT_EQ(port.queue_stats(1).enqueued_packets.get(), 10u);
  EXPECT_EQ(port.queue_stats(1).enqueued_bytes.get(), 1045u);
  EXPECT_EQ(port.data_sent_packets(), 4u);
  EXPECT_EQ(port.data_sent_bytes(), 406u);
  EXPECT_EQ(port.residence().total(), 4u);
  EXPECT_EQ(take(port, 6).size(), 6u);
  EXPECT_EQ(port.queue_bytes(1), 0u);
  EXPECT_EQ(buffer.used(), 0u);
  EXPECT_EQ(port.data_sent_bytes(), 1045u);
  EXPECT_EQ(port.next_event_ns(7), UINT64_MAX);
}

TEST(EgressPortBurst, StrictPriorityRunsTakeTheHighestQueueFirst) {
  SharedBuffer buffer(1 << 20, 8.0);
  EgressPortConfig cfg = config(4);
  cfg.scheduler = SchedulerKind::kStrictPriority;
  EgressPort port(cfg, &buffer);
  for (int i = 0; i < 3; ++i) port.enqueue(0, 1, packet(1500), false);
  for (int i = 0; i < 2; ++i) port.enqueue(0, 3, packet(1500), false);
  EXPECT_EQ(queues_of(take(port, 1, 4)), (std::vector<int>{3, 3, 1, 1}));
  port.enqueue(2, 3, packet(64), false);
  EXPECT_EQ(queues_of(take(port, 3, 4)), (std::vector<int>{3, 1}));
}

// 1 Gb/s: 8 ns per wire byte. The bucket holds 1000 wire bytes = 8000 ns.
EgressPortConfig shaped(uint32_t queues, uint32_t overhead) {
  EgressPortConfig cfg = config(queues);
  cfg.rate_bps = 1'000'000'000;
  cfg.burst_bytes = 1000;
  cfg.wire_overhead_bytes = overhead;
  return cfg;
}

TEST(EgressPortBurst, ShaperBudgetCarriesAcrossQueuesInABurst) {
  SharedBuffer buffer(1 << 20, 8.0);
  EgressPort port(shaped(2, 24), &buffer);
  for (int i = 0; i < 2; ++i) port.enqueue(0, 0, packet(276), false);  // 300 wire bytes
  for (int i = 0; i < 3; ++i) port.enqueue(0, 1, packet(276), false);
  // Tokens (wire bytes) 1000 -> 700 -> 400 (q0 empty) -> 100 -> -200: stop.
  EXPECT_EQ(queues_of(take(port, 0)), (std::vector<int>{0, 0, 1, 1}));
  // 200 bytes owed = 1600 ns.
  EXPECT_EQ(port.next_event_ns(0), 1600u);
  EXPECT_TRUE(take(port, 1599).empty());
  EXPECT_EQ(queues_of(take(port, 1600)), (std::vector<int>{1}));
}

// Queues of one packet each (BFC spreads flows that way) take dequeue's
// run-of-one path: the same order, stats, buffer, residence and shaper
// budget as longer runs.
TEST(EgressPortBurst, RunsOfOneAcrossManyQueues) {
  SharedBuffer buffer(1 << 20, 8.0);
  EgressPortConfig cfg = shaped(8, 24);
  cfg.drr_quantum_bytes = 500;
  EgressPort port(cfg, &buffer);
  // q 0..7, one packet each of 176 + 0..7 bytes (200.. wire bytes), enqueued at q x 10 ns.
  for (uint16_t q = 0; q < 8; ++q) port.enqueue(q * 10, q, packet(176 + q, q), false);
  // Tokens 1000: 200, 201, 202, 203 leave 194, then 204 takes it to -10: five frames.
  auto out = take(port, 100);
  ASSERT_EQ(queues_of(out), (std::vector<int>{0, 1, 2, 3, 4}));
  for (uint16_t q = 0; q < 5; ++q) {
    EXPECT_EQ(out[q].aux, q);
    EXPECT_EQ(port.queue_stats(q).dequeued_packets.get(), 1u);
    EXPECT_EQ(port.queue_stats(q).dequeued_bytes.get(), 176u + q);
    EXPECT_EQ(port.queue_packets(q), 0u);
    EXPECT_EQ(port.queue(q).head_index(), 0u);  // rewound
  }
  EXPECT_EQ(buffer.used(), 3u * 176 + 5 + 6 + 7);
  EXPECT_EQ(port.residence().total(), 5u);
  EXPECT_EQ(port.residence().sum_ns(), 100u + 90 + 80 + 70 + 60);
  // A rewound queue takes new packets in order; the budget (1000 again)
  // covers 205 + 206 + 207 + 504, then the 624-byte frame waits.
  port.enqueue(100, 0, packet(480, 100), false);
  port.enqueue(100, 0, packet(600, 101), false);
  EXPECT_EQ(queues_of(take(port, 1'000'000)), (std::vector<int>{5, 6, 7, 0}));
  auto last = take(port, 2'000'000);
  ASSERT_EQ(last.size(), 1u);
  EXPECT_EQ(last[0].aux, 101u);
  EXPECT_EQ(buffer.used(), 0u);
  EXPECT_EQ(port.data_sent_packets(), 10u);
}

TEST(EgressPortBurst, ControlSpendsTheTokensBeforeData) {
  SharedBuffer buffer(1 << 20, 8.0);
  EgressPort port(shaped(1, 0), &buffer);
  for (int i = 0; i < 3; ++i) port.enqueue(0, 0, packet(300), false);
  port.enqueue_control(0, packet(500));
  // 1000 -> 500 (control) -> 200 -> -100: control and two data frames.
  auto out = take(port, 0);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].queue, kControlQueue);
  EXPECT_EQ(port.next_event_ns(0), 800u);
}

TEST(EgressPortBurst, OversizedFrameCostsTheShapersMaximum) {
  SharedBuffer buffer(1 << 24, 8.0);
  EgressPort port(shaped(1, 0), &buffer);
  port.enqueue(0, 0, packet(2 * TokenBucketShaper::kMaxFrameBytes), false);
  port.enqueue(0, 0, packet(100), false);
  EXPECT_EQ(take(port, 0).size(), 1u);
  // Costed as 2^20 bytes: 1000 - 1048576 wire bytes, owed 1047576 x 8 ns.
  EXPECT_EQ(port.next_event_ns(0), 1047576u * 8);
}

TEST(EgressPortBurst, RefusalsChargeNothingAndKeepTheQueueUsable) {
  SharedBuffer buffer(1000, 1.0);
  EgressPort port(config(2, 2), &buffer);
  EXPECT_EQ(port.enqueue(0, 0, packet(100), false).verdict, EnqueueVerdict::kEnqueued);
  EXPECT_EQ(port.enqueue(0, 0, packet(100), false).verdict, EnqueueVerdict::kEnqueued);
  // Full ring, though the buffer admits: not charged.
  EXPECT_EQ(port.enqueue(0, 0, packet(100), false).reason, DropReason::kQueueFull);
  EXPECT_EQ(buffer.used(), 200u);
  // Full ring and past the threshold (200 + 700 > 800): the buffer's reason wins.
  EXPECT_EQ(port.enqueue(0, 0, packet(700), false).reason, DropReason::kQueueThreshold);
  EXPECT_EQ(port.queue_stats(0).drops[static_cast<unsigned>(DropReason::kQueueFull)].get(), 1u);
  EXPECT_EQ(port.queue_stats(0).drops[static_cast<unsigned>(DropReason::kQueueThreshold)].get(),
            1u);
  EXPECT_EQ(port.queue_stats(0).enqueued_packets.get(), 2u);
  EXPECT_EQ(port.queue_bytes(0), 200u);
  EXPECT_EQ(take(port, 1).size(), 2u);
  EXPECT_EQ(port.enqueue(1, 0, packet(100), false).verdict, EnqueueVerdict::kEnqueued);
}

}  // namespace
}  // namespace sluice
