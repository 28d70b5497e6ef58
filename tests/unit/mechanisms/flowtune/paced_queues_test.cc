// The edge pacer's held packets: released in due order across flows, FIFO
// within a flow, bounded per flow, flushed whole; checked against a sorted
// reference on random pushes and pops.
#include "lib/mechanisms/flowtune/paced_queues.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <stdexcept>
#include <vector>

namespace sluice {
namespace {

void* tag(uintptr_t v) { return reinterpret_cast<void*>(v); }
uintptr_t untag(void* p) { return reinterpret_cast<uintptr_t>(p); }

TEST(PacedQueues, ReleasesInDueOrderAcrossFlows) {
  PacedQueues q(8, 4);
  ASSERT_TRUE(q.push(1, {tag(10), 100, 1, 1500}));
  ASSERT_TRUE(q.push(1, {tag(11), 300, 1, 1500}));
  ASSERT_TRUE(q.push(5, {tag(50), 200, 5, 64}));
  ASSERT_TRUE(q.push(5, {tag(51), 400, 5, 64}));
  EXPECT_EQ(q.next_due_ns(), 100u);
  EXPECT_EQ(q.total_held(), 4u);
  std::vector<uintptr_t> got;
  auto out = [&](const PacedQueues::Held& h) { got.push_back(untag(h.pkt)); };
  EXPECT_EQ(q.pop_due(99, 10, out), 0u);
  EXPECT_EQ(q.pop_due(250, 10, out), 2u);
  EXPECT_EQ(got, (std::vector<uintptr_t>{10, 50}));
  EXPECT_EQ(q.next_due_ns(), 300u);
  EXPECT_EQ(q.pop_due(1000, 1, out), 1u);  // at most max
  EXPECT_EQ(q.pop_due(1000, 10, out), 1u);
  EXPECT_EQ(got, (std::vector<uintptr_t>{10, 50, 11, 51}));
  EXPECT_EQ(q.next_due_ns(), PacedQueues::kNever);
  EXPECT_EQ(q.total_held(), 0u);
}

TEST(PacedQueues, BoundedPerSlotAndDueTimesNeverGoBack) {
  PacedQueues q(4, 2);
  EXPECT_TRUE(q.push(0, {tag(1), 10, 1, 1}));
  EXPECT_FALSE(q.push(0, {tag(2), 5, 1, 1}));   // earlier than the tail
  EXPECT_TRUE(q.push(0, {tag(3), 10, 1, 1}));   // equal is fine
  EXPECT_FALSE(q.push(0, {tag(4), 20, 1, 1}));  // full
  EXPECT_EQ(q.held(0), 2u);
  EXPECT_TRUE(q.push(1, {tag(5), 1, 2, 1}));  // other slots unaffected
}

TEST(PacedQueues, FlushGivesOneSlotInOrderAndKeepsTheRest) {
  PacedQueues q(4, 8);
  for (uintptr_t i = 0; i < 3; ++i) ASSERT_TRUE(q.push(2, {tag(20 + i), 100 + i, 2, 1}));
  ASSERT_TRUE(q.push(3, {tag(30), 50, 3, 1}));
  ASSERT_TRUE(q.push(0, {tag(40), 500, 4, 1}));
  std::vector<uintptr_t> got;
  auto out = [&](const PacedQueues::Held& h) { got.push_back(untag(h.pkt)); };
  EXPECT_EQ(q.flush(2, out), 3u);
  EXPECT_EQ(got, (std::vector<uintptr_t>{20, 21, 22}));
  EXPECT_EQ(q.flush(2, out), 0u);
  got.clear();
  EXPECT_EQ(q.pop_due(1000, 10, out), 2u);
  EXPECT_EQ(got, (std::vector<uintptr_t>{30, 40}));
  // The slot is usable again, from any time.
  EXPECT_TRUE(q.push(2, {tag(7), 1, 9, 1}));
  EXPECT_EQ(q.next_due_ns(), 1u);
}

TEST(PacedQueues, MatchesASortedReferenceOnRandomTraffic) {
  constexpr uint32_t kSlots = 64;
  PacedQueues q(kSlots, 16);
  std::mt19937_64 rng(7);
  std::vector<uint64_t> tail(kSlots, 0);
  struct Ref {
    uint64_t due;
    uint64_t seq;
    uint32_t slot;
  };
  std::vector<Ref> ref;
  uint64_t seq = 0, now = 0;
  for (int round = 0; round < 20000; ++round) {
    const uint32_t slot = rng() % kSlots;
    const uint64_t due = std::max(tail[slot], now) + rng() % 50;
    if (q.push(slot, {tag(seq), due, slot, 1})) {
      tail[slot] = due;
      ref.push_back({due, seq, slot});
    }
    ++seq;
    if (rng() % 3 == 0) {
      now += rng() % 40;
      std::vector<Ref> expect;
      for (const Ref& r : ref) {
        if (r.due <= now) expect.push_back(r);
      }
      std::vector<Ref> got;
      q.pop_due(now, UINT32_MAX, [&](const PacedQueues::Held& h) {
        got.push_back({h.due_ns, untag(h.pkt), h.flow_id});
      });
      ASSERT_EQ(got.size(), expect.size());
      for (size_t i = 1; i < got.size(); ++i) ASSERT_LE(got[i - 1].due, got[i].due);
      // Within a slot, arrival order.
      std::vector<uint64_t> last_seq(kSlots, 0);
      std::vector<bool> seen(kSlots, false);
      for (const Ref& g : got) {
        if (seen[g.slot]) {
          ASSERT_GT(g.seq, last_seq[g.slot]);
        }
        seen[g.slot] = true;
        last_seq[g.slot] = g.seq;
      }
      std::erase_if(ref, [&](const Ref& r) { return r.due <= now; });
      ASSERT_EQ(q.total_held(), ref.size());
    }
  }
}

TEST(PacedQueues, RefusesBadSizes) {
  EXPECT_THROW(PacedQueues(6, 4), std::invalid_argument);
  EXPECT_THROW(PacedQueues(8, 0), std::invalid_argument);
}

}  // namespace
}  // namespace sluice
