// Flowtune's edge flowlet detection on a simulated clock: START on a new
// flow and after an idle gap (with a new id), END exactly once from expire()
// or inline, collisions and table full counted, bounded expire work, and
// the instant the first flowlet can end (exact fabric time's due time).
#include "lib/mechanisms/flowtune/flowlet_table.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <vector>

namespace sluice {
namespace {

using Kind = FlowletTable::Kind;
constexpr uint64_t kUs = 1000;

TEST(FlowletTable, NewFlowStartsAFlowletAndPacketsWithinTheGapDoNot) {
  FlowletTable t(64);
  EXPECT_EQ(t.idle_gap_ns(), 100 * kUs);
  auto r = t.on_packet(42, 1, 2, 0);
  EXPECT_EQ(r.kind, Kind::kStart);
  EXPECT_NE(r.flow_id, 0u);
  EXPECT_EQ(r.ended_flow_id, 0u);
  // Packets spaced 99 µs apart: each gap is within the idle gap.
  for (uint64_t now = 99 * kUs; now < 2000 * kUs; now += 99 * kUs) {
    auto c = t.on_packet(42, 1, 2, now);
    EXPECT_EQ(c.kind, Kind::kContinue);
    EXPECT_EQ(c.flow_id, r.flow_id);
  }
  // Exactly the gap is not more than the gap.
  auto last = t.on_packet(42, 1, 2, 3000 * kUs);
  EXPECT_EQ(last.kind, Kind::kStart);  // 3000 - 1980 > 100
  EXPECT_EQ(t.on_packet(42, 1, 2, 3100 * kUs).kind, Kind::kContinue);
  EXPECT_EQ(t.flowlets_started.get(), 2u);
  EXPECT_EQ(t.active(), 1u);
}

TEST(FlowletTable, AfterTheGapANewFlowletWithANewIdAndTheOldOneEnds) {
  FlowletTable t(64);
  const uint32_t first = t.on_packet(7, 1, 2, 0).flow_id;
  auto r = t.on_packet(7, 1, 2, 100 * kUs + 1);
  EXPECT_EQ(r.kind, Kind::kStart);
  EXPECT_NE(r.flow_id, first);
  EXPECT_EQ(r.ended_flow_id, first);                  // expire() had not run: END reported here
  EXPECT_EQ(t.slot_of(r.flow_id), t.slot_of(first));  // slot reused
  EXPECT_EQ(t.flowlets_ended.get(), 1u);
  // expire() does not report the old flowlet again, nor the live one.
  std::vector<uint32_t> ended;
  t.expire(150 * kUs, t.capacity(), [&](uint32_t id) { ended.push_back(id); });
  EXPECT_TRUE(ended.empty());
}

TEST(FlowletTable, ExpireReportsEndExactlyOnce) {
  FlowletTable t(64);
  const uint32_t a = t.on_packet(1, 1, 2, 0).flow_id;
  const uint32_t b = t.on_packet(2, 1, 3, 50 * kUs).flow_id;
  std::vector<uint32_t> ended;
  auto cb = [&](uint32_t id) { ended.push_back(id); };
  EXPECT_EQ(t.expire(100 * kUs, t.capacity(), cb), 0u);  // idle exactly the gap
  EXPECT_EQ(t.expire(120 * kUs, t.capacity(), cb), 1u);
  EXPECT_EQ(ended, std::vector<uint32_t>{a});
  EXPECT_EQ(t.expire(500 * kUs, t.capacity(), cb), 1u);
  EXPECT_EQ(t.expire(900 * kUs, t.capacity(), cb), 0u);
  EXPECT_EQ(ended, (std::vector<uint32_t>{a, b}));
  EXPECT_EQ(t.active(), 0u);
  EXPECT_EQ(t.flowlets_ended.get(), 2u);
  // The flow comes back: a new flowlet, nothing to end inline.
  auto r = t.on_packet(1, 1, 2, 1000 * kUs);
  EXPECT_EQ(r.kind, Kind::kStart);
  EXPECT_EQ(r.ended_flow_id, 0u);
  EXPECT_NE(r.flow_id, a);
}

TEST(FlowletTable, ExpireWorkIsBoundedAndRoundRobin) {
  FlowletTable t(256);
  for (uint64_t k = 0; k < 100; ++k) t.on_packet(k, 1, 2, 0);
  uint32_t total = 0;
  int calls = 0;
  while (calls < 16) {
    const uint32_t n = t.expire(1000 * kUs, 32, [](uint32_t) {});
    EXPECT_LE(n, 32u);
    total += n;
    ++calls;
  }
  EXPECT_EQ(calls * 32, 2 * 256);              // two sweeps
  EXPECT_EQ(total, t.flowlets_started.get());  // every tracked flow (some buckets filled up)
  EXPECT_EQ(total + t.table_full.get(), 100u);
  EXPECT_EQ(t.active(), 0u);
}

TEST(FlowletTable, TouchKeepsAFlowletWhoseQueueDrainsFromEnding) {
  FlowletTable t(64);
  const uint32_t id = t.on_packet(7, 1, 2, 0).flow_id;
  std::vector<uint32_t> ended;
  auto on_end = [&](uint32_t f) { ended.push_back(f); };
  // Its last packet is held until 1 ms: active until then, idle after the gap.
  t.touch(id, 1000 * kUs);
  for (uint64_t now = 50 * kUs; now <= 1100 * kUs; now += 50 * kUs) t.expire(now, 64, on_end);
  EXPECT_TRUE(ended.empty());
  EXPECT_EQ(t.on_packet(7, 1, 2, 1050 * kUs).kind, Kind::kContinue);
  t.touch(id, 10 * kUs);  // never moves its time back
  t.expire(1140 * kUs, 64, on_end);
  EXPECT_TRUE(ended.empty());
  t.expire(1151 * kUs, 64, on_end);
  EXPECT_EQ(ended, std::vector<uint32_t>{id});
  t.touch(id, 5000 * kUs);  // ended: a touch does not revive it
  EXPECT_EQ(t.active(), 0u);
  EXPECT_EQ(t.on_packet(7, 1, 2, 1200 * kUs).kind, Kind::kStart);
}

TEST(FlowletTable, CollisionsCountedAndTableFullForwardsUnreported) {
  FlowletTable t(4);  // one bucket of 4 ways: every flow collides
  for (uint64_t k = 1; k <= 4; ++k) {
    auto r = t.on_packet(k, 1, 2, 0);
    EXPECT_EQ(r.kind, Kind::kStart);
  }
  EXPECT_EQ(t.collisions.get(), 3u);
  auto full = t.on_packet(5, 1, 2, 10 * kUs);
  EXPECT_EQ(full.kind, Kind::kUntracked);
  EXPECT_EQ(full.flow_id, 0u);
  EXPECT_EQ(t.table_full.get(), 1u);
  EXPECT_EQ(t.flowlets_started.get(), 4u);
  // Flows already in the table keep their ids.
  EXPECT_EQ(t.on_packet(2, 1, 2, 20 * kUs).kind, Kind::kContinue);
  // Once flow 1 has been idle past the gap, a new flow takes its slot and
  // the old flowlet's END is reported with the START.
  const uint32_t old1 = t.on_packet(1, 1, 2, 30 * kUs).flow_id;
  for (uint64_t k = 2; k <= 4; ++k) t.on_packet(k, 1, 2, 140 * kUs);
  auto r = t.on_packet(5, 1, 2, 140 * kUs);
  EXPECT_EQ(r.kind, Kind::kStart);
  EXPECT_EQ(r.ended_flow_id, old1);
  EXPECT_EQ(t.active(), 4u);
  // ...and expire() does not report it a second time.
  std::vector<uint32_t> ended;
  t.expire(200 * kUs, 4, [&](uint32_t id) { ended.push_back(id); });
  EXPECT_TRUE(ended.empty());
}

TEST(FlowletTable, IdsAreNeverZeroAndEncodeTheSlot) {
  FlowletTable t(1u << 24);  // 8 bits of counter: wraps after 255 flowlets
  for (int i = 0; i < 600; ++i) {
    auto r = t.on_packet(9, 1, 2, static_cast<uint64_t>(i) * 200 * kUs);
    ASSERT_EQ(r.kind, Kind::kStart);
    ASSERT_NE(r.flow_id, 0u);
    ASSERT_LT(t.slot_of(r.flow_id), t.capacity());
  }
}

TEST(FlowletTable, NextEndIsWhenTheFirstFlowletEndsAfterAWholeSweep) {
  FlowletTable t(64);
  EXPECT_EQ(t.next_end_ns(), FlowletTable::kNever);
  const uint32_t a = t.on_packet(1, 1, 2, 10 * kUs).flow_id;
  EXPECT_EQ(t.next_end_ns(), 110 * kUs + 1);  // a START moves it earlier at once
  t.on_packet(2, 1, 3, 30 * kUs);
  t.on_packet(1, 1, 2, 50 * kUs);  // a packet moves a's end later: still a lower bound
  EXPECT_EQ(t.next_end_ns(), 110 * kUs + 1);
  std::vector<uint32_t> ended;
  auto cb = [&](uint32_t id) { ended.push_back(id); };
  // A whole sweep at the bound ends nothing and makes it exact: flow 2's end.
  EXPECT_EQ(t.expire(110 * kUs + 1, t.capacity(), cb), 0u);
  EXPECT_EQ(t.next_end_ns(), 130 * kUs + 1);
  EXPECT_EQ(t.expire(130 * kUs + 1, t.capacity(), cb), 1u);
  EXPECT_EQ(t.next_end_ns(), 150 * kUs + 1);
  // A held packet due later keeps a alive until then (touch).
  t.touch(a, 200 * kUs);
  EXPECT_EQ(t.expire(150 * kUs + 1, t.capacity(), cb), 0u);
  EXPECT_EQ(t.next_end_ns(), 300 * kUs + 1);
  EXPECT_EQ(t.expire(300 * kUs + 1, t.capacity(), cb), 1u);
  EXPECT_EQ(ended, (std::vector<uint32_t>{ended[0], a}));
  EXPECT_EQ(t.next_end_ns(), FlowletTable::kNever);
}

TEST(FlowletTable, RejectsBadCapacityAndGap) {
  EXPECT_THROW(FlowletTable(0), std::invalid_argument);
  EXPECT_THROW(FlowletTable(2), std::invalid_argument);
  EXPECT_THROW(FlowletTable(96), std::invalid_argument);
  EXPECT_THROW(FlowletTable(64, 0), std::invalid_argument);
}

}  // namespace
}  // namespace sluice
