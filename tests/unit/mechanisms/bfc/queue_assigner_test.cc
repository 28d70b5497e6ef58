#include "lib/mechanisms/bfc/queue_assigner.h"

#include <gtest/gtest.h>

#include <array>
#include <set>
#include <stdexcept>
#include <utility>

namespace sluice {
namespace {

constexpr uint64_t kSticky = 2 * 10'000;  // 2 x 10 us hop RTT

QueueAssignerConfig cfg(BfcAssignment mode, uint32_t queues) {
  QueueAssignerConfig c;
  c.mode = mode;
  c.num_ports = 2;
  c.queues_per_port = queues;
  c.sticky_ns = kSticky;
  c.rng_seed = 42;
  return c;
}

TEST(BfcQueueAssigner, RejectsBadQueueCounts) {
  EXPECT_THROW(QueueAssigner(cfg(BfcAssignment::kDynamic, 0)), std::invalid_argument);
  EXPECT_THROW(QueueAssigner(cfg(BfcAssignment::kDynamic, 65)), std::invalid_argument);
}

TEST(BfcQueueAssigner, NewFlowGetsAnEmptyQueue) {
  QueueAssigner a(cfg(BfcAssignment::kDynamic, 4));
  a.on_queue_nonempty(0, 0);
  a.on_queue_nonempty(0, 1);
  FlowEntry e;
  EXPECT_EQ(a.assign(0, 99, e, 1000), 2);
  EXPECT_EQ(e.queue, 2);
  EXPECT_TRUE(e.used);
  EXPECT_EQ(a.queue_collisions(), 0u);
}

TEST(BfcQueueAssigner, SearchStartRotatesPastTheLastPick) {
  QueueAssigner a(cfg(BfcAssignment::kDynamic, 4));
  // All four queues empty; each new (idle) entry gets the next one, wrapping.
  const uint16_t want[] = {0, 1, 2, 3, 0, 1};
  for (uint16_t w : want) {
    FlowEntry e;
    EXPECT_EQ(a.assign(0, 1, e, 1000), w);
  }
  // From start 2, with only queues 0 and 3 empty, the pick is 3, then 0.
  a.on_queue_nonempty(0, 1);
  a.on_queue_nonempty(0, 2);
  FlowEntry e1, e2;
  EXPECT_EQ(a.assign(0, 1, e1, 1000), 3);
  EXPECT_EQ(a.assign(0, 1, e2, 1000), 0);
}

TEST(BfcQueueAssigner, PortsHaveTheirOwnBitmapAndStart) {
  QueueAssigner a(cfg(BfcAssignment::kDynamic, 4));
  a.on_queue_nonempty(0, 0);
  FlowEntry e0, e1;
  EXPECT_EQ(a.assign(0, 1, e0, 0), 1);
  EXPECT_EQ(a.assign(1, 1, e1, 0), 0);
  EXPECT_EQ(a.empty_mask(0), 0b1110u);
  EXPECT_EQ(a.empty_mask(1), 0b1111u);
}

TEST(BfcQueueAssigner, NoEmptyQueueMeansRandomQueueAndACollision) {
  QueueAssigner a(cfg(BfcAssignment::kDynamic, 8));
  for (uint16_t q = 0; q < 8; ++q) a.on_queue_nonempty(0, q);
  std::set<uint16_t> seen;
  for (int i = 0; i < 400; ++i) {
    FlowEntry e;
    const uint16_t q = a.assign(0, 5, e, 0);
    ASSERT_LT(q, 8);
    seen.insert(q);
  }
  EXPECT_EQ(a.queue_collisions(), 400u);
  EXPECT_EQ(seen.size(), 8u);  // 400 uniform draws miss a queue with p < 8 x (7/8)^400
  // Same seed, same sequence.
  QueueAssigner b(cfg(BfcAssignment::kDynamic, 8));
  QueueAssigner c(cfg(BfcAssignment::kDynamic, 8));
  for (uint16_t q = 0; q < 8; ++q) b.on_queue_nonempty(0, q), c.on_queue_nonempty(0, q);
  for (int i = 0; i < 20; ++i) {
    FlowEntry x, y;
    EXPECT_EQ(b.assign(0, 1, x, 0), c.assign(0, 1, y, 0));
  }
}

TEST(BfcQueueAssigner, KeepsQueueWhilePacketsAreInTheSwitch) {
  QueueAssigner a(cfg(BfcAssignment::kDynamic, 4));
  FlowEntry e;
  EXPECT_EQ(a.assign(0, 1, e, 0), 0);
  e.packets = 3;
  e.last_active_ns = 0;
  a.on_queue_nonempty(0, 0);
  // Long after the sticky time, but packets are here: same queue.
  EXPECT_EQ(a.assign(0, 1, e, 10 * kSticky), 0);
}

TEST(BfcQueueAssigner, StickyForTwoHopRttsAfterLastActivity) {
  QueueAssigner a(cfg(BfcAssignment::kDynamic, 4));
  FlowEntry e;
  EXPECT_EQ(a.assign(0, 1, e, 0), 0);
  e.packets = 0;
  e.last_active_ns = 5000;
  // Inside the window: kept even though queue 0 is no longer the next pick.
  EXPECT_EQ(a.assign(0, 1, e, 5000 + kSticky - 1), 0);
  // At the threshold the entry is reassigned: rotation continues at 1.
  EXPECT_EQ(a.assign(0, 1, e, 5000 + kSticky), 1);
}

// last_active + sticky can pass 2^64 (sticky is any configured duration):
// the entry must stay sticky, not wrap to a deadline long past.
TEST(BfcQueueAssigner, StickyNearUint64MaxDoesNotWrap) {
  QueueAssignerConfig c = cfg(BfcAssignment::kDynamic, 4);
  c.sticky_ns = UINT64_MAX - 10;
  QueueAssigner a(c);
  FlowEntry e;
  EXPECT_EQ(a.assign(0, 1, e, 1000), 0);
  e.last_active_ns = 1000;  // 1000 + sticky wraps to 989
  EXPECT_EQ(a.assign(0, 1, e, 2000), 0);
  EXPECT_EQ(a.assign(0, 1, e, UINT64_MAX - 1), 0);

  // A short sticky late on the clock: last + sticky passes 2^64 too.
  QueueAssigner b(cfg(BfcAssignment::kDynamic, 4));
  FlowEntry f;
  EXPECT_EQ(b.assign(0, 1, f, UINT64_MAX - 5), 0);
  f.last_active_ns = UINT64_MAX - 5;
  EXPECT_EQ(b.assign(0, 1, f, UINT64_MAX - 1), 0);
  EXPECT_EQ(b.queue_collisions(), 0u);
}

// Flow table and assigner together on a simulated clock: the entry's last
// activity is its last departure, and stickiness runs from there.
TEST(BfcQueueAssigner, WithFlowTableStickinessRunsFromTheLastDeparture) {
  const std::array<bool, 2> ports = {true, true};
  FlowTable table(ports, 4);
  QueueAssigner a(cfg(BfcAssignment::kDynamic, 4));
  const uint32_t hash = 0xABCD1234;
  auto enqueue = [&](uint64_t now) {
    const uint32_t i = table.index(1, hash);
    const uint16_t q = a.assign(1, hash, table.at(i), now);
    table.on_enqueue(i, hash, now);
    a.on_queue_nonempty(1, q);
    return std::pair{i, q};
  };
  auto [i, q] = enqueue(1000);
  EXPECT_EQ(q, 0);
  EXPECT_EQ(enqueue(2000).second, 0);  // packets here: same queue
  table.on_departure(i, 3000);
  table.on_departure(i, 4000);
  a.on_queue_empty(1, 0);
  EXPECT_EQ(table.at(i).packets, 0u);
  EXPECT_EQ(enqueue(4000 + kSticky - 1).second, 0);  // sticky
  table.on_departure(i, 50'000);
  a.on_queue_empty(1, 0);
  EXPECT_EQ(enqueue(50'000 + kSticky).second, 1);  // idle 2 HRTT: next empty queue
}

TEST(BfcQueueAssigner, StochasticIsHashModQueues) {
  QueueAssigner a(cfg(BfcAssignment::kStochastic, 8));
  FlowEntry e;
  EXPECT_EQ(a.assign(0, 13, e, 0), 5);
  EXPECT_EQ(a.assign(0, 13, e, 1'000'000), 5);
  FlowEntry f;
  EXPECT_EQ(a.assign(1, 0xFFFFFFFFu, f, 0), 0xFFFFFFFFu % 8);
  EXPECT_EQ(a.queue_collisions(), 0u);
}

TEST(BfcQueueAssigner, SingleIsAlwaysQueueZero) {
  QueueAssigner a(cfg(BfcAssignment::kSingle, 8));
  a.on_queue_nonempty(0, 0);
  for (uint32_t h = 0; h < 50; ++h) {
    FlowEntry e;
    EXPECT_EQ(a.assign(0, h * 7919, e, h), 0);
  }
}

}  // namespace
}  // namespace sluice
