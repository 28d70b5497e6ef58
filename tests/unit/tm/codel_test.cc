// CoDel against RFC 8289: when it starts dropping, the control law's drop
// times, leaving the dropping state, the one-MTU floor and ECN marking.
#include "lib/tm/flow_queues/codel.h"

#include <gtest/gtest.h>

#include <deque>
#include <vector>

namespace sluice {
namespace {

constexpr uint64_t kMs = 1'000'000;

// A FIFO of packets, each `bytes` long, as CoDel's caller keeps one.
struct Fifo {
  struct Pkt {
    uint64_t enqueue_ns;
    bool ecn;
  };
  std::deque<Pkt> q;
  uint32_t bytes = 1500;
  std::vector<uint64_t> drops;  // when each drop happened
  uint64_t now = 0;

  CodelVerdict dequeue(CodelState& c, const CodelParams& p, uint64_t t) {
    now = t;
    auto pop = [&](CodelPacket* cp) {
      if (q.empty()) return false;
      cp->enqueue_ns = q.front().enqueue_ns;
      cp->ecn_capable = q.front().ecn;
      q.pop_front();
      return true;
    };
    auto left = [&] { return uint64_t{bytes} * q.size(); };
    auto drop = [&] {
      drops.push_back(now);
      return true;
    };
    return c.dequeue(t, p, pop, left, drop);
  }
};

CodelParams params(bool ecn = false) {
  CodelParams p;
  p.target_ns = 5 * kMs;
  p.interval_ns = 100 * kMs;
  p.mtu_bytes = 1514;
  p.ecn = ecn;
  return p;
}

// A standing queue: every packet has waited 20 ms when it leaves, one
// leaves every ms and one arrives every ms, so the queue never drains.
void standing(Fifo& f, uint64_t until_ms) {
  for (uint64_t t = 0; t <= until_ms + 20; ++t) f.q.push_back({t * kMs, false});
}

TEST(Codel, DropsAfterAnIntervalAboveTargetThenByTheControlLaw) {
  Fifo f;
  standing(f, 600);
  CodelState c;
  const CodelParams p = params();
  // Dequeue at 20, 21, ... ms: the head was enqueued at t - 20 ms, plus the
  // packets dropped ahead of it.
  for (uint64_t t = 20; t <= 600; ++t) f.dequeue(c, p, t * kMs);
  // RFC 8289 section 5.5 by hand: above target from the first dequeue
  // (20 ms), so first_above = 120 ms and the first drop is at 120 ms with
  // count 1; then drop_next = 120 + 100/sqrt(1) = 220 ms, + 100/sqrt(2) =
  // 290.71, + 100/sqrt(3) = 348.44, + 100/sqrt(4) = 398.44, + 100/sqrt(5)
  // = 443.16, + 100/sqrt(6) = 483.99, + 100/sqrt(7) = 521.78, + 100/sqrt(8)
  // = 557.14, + 100/sqrt(9) = 590.47; each drop happens at the first
  // dequeue (whole ms) at or after it.
  const std::vector<uint64_t> want = {120, 220, 291, 349, 399, 444, 484, 522, 558, 591};
  ASSERT_EQ(f.drops.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(f.drops[i], want[i] * kMs) << i;
  EXPECT_TRUE(c.dropping());
  EXPECT_EQ(c.count(), want.size());
  EXPECT_EQ(c.drops(), want.size());
}

TEST(Codel, ControlLawIsIntervalOverSquareRootOfCount) {
  EXPECT_EQ(CodelState::control_law(1000, 100 * kMs, 1), 1000 + 100 * kMs);
  EXPECT_EQ(CodelState::control_law(0, 100 * kMs, 4), 50 * kMs);
  EXPECT_EQ(CodelState::control_law(0, 100 * kMs, 2), 70'710'678u);  // 100 ms / 1.41421356
}

TEST(Codel, NeverDropsBelowTargetOrFromAQueueOfOneFrame) {
  const CodelParams p = params();
  {
    // Sojourn 4 ms < target, for a second.
    Fifo f;
    CodelState c;
    for (uint64_t t = 0; t < 1000; ++t) {
      f.q.push_back({t * kMs, false});
      if (t >= 4) EXPECT_EQ(f.dequeue(c, p, t * kMs), CodelVerdict::kSend);
    }
    EXPECT_TRUE(f.drops.empty());
  }
  {
    // Sojourn 50 ms but the packet leaves the queue empty (one frame).
    Fifo f;
    CodelState c;
    for (uint64_t t = 0; t < 1000; ++t) {
      f.q.push_back({t * kMs, false});
      EXPECT_EQ(f.dequeue(c, p, t * kMs + 50 * kMs), CodelVerdict::kSend);
    }
    EXPECT_TRUE(f.drops.empty());
    EXPECT_FALSE(c.dropping());
  }
}

TEST(Codel, LeavesTheDroppingStateWhenTheSojournFallsBelowTarget) {
  Fifo f;
  standing(f, 200);
  CodelState c;
  const CodelParams p = params();
  for (uint64_t t = 20; t <= 130; ++t) f.dequeue(c, p, t * kMs);
  ASSERT_TRUE(c.dropping());
  // The queue drains: a fresh packet (sojourn 0) leaves.
  f.q.clear();
  f.q.push_back({131 * kMs, false});
  f.q.push_back({131 * kMs, false});
  EXPECT_EQ(f.dequeue(c, p, 131 * kMs), CodelVerdict::kSend);
  EXPECT_FALSE(c.dropping());
  // Empty: kNone, still not dropping.
  f.q.clear();
  EXPECT_EQ(f.dequeue(c, p, 132 * kMs), CodelVerdict::kNone);
}

TEST(Codel, ReenteringSoonResumesNearTheOldRate) {
  Fifo f;
  standing(f, 700);
  CodelState c;
  const CodelParams p = params();
  for (uint64_t t = 20; t <= 390; ++t) f.dequeue(c, p, t * kMs);
  ASSERT_EQ(c.count(), 4u);  // drops at 120, 220, 291, 349; drop_next 398.45 ms
  // Below target once, at 391 ms: leaves the dropping state.
  f.q.push_front({391 * kMs, false});
  f.dequeue(c, p, 391 * kMs);
  ASSERT_FALSE(c.dropping());
  // Above again from 392 ms: first_above = 492 ms, the next drop then. It
  // is within 16 intervals of drop_next, and count - lastcount = 4 - 1 = 3
  // > 1, so count restarts at 3 (section 5.6), not at 1.
  const size_t before = f.drops.size();
  for (uint64_t t = 392; t <= 492; ++t) f.dequeue(c, p, t * kMs);
  ASSERT_EQ(f.drops.size(), before + 1);
  EXPECT_EQ(f.drops.back(), 492 * kMs);
  EXPECT_EQ(c.count(), 3u);
  EXPECT_EQ(c.drop_next_ns(), 492 * kMs + 57'735'026u);  // 100 ms / sqrt(3)
}

TEST(Codel, MarksEcnCapablePacketsInsteadOfDropping) {
  Fifo f;
  for (uint64_t t = 0; t <= 320; ++t) f.q.push_back({t * kMs, true});
  CodelState c;
  const CodelParams p = params(/*ecn=*/true);
  std::vector<uint64_t> marks;
  for (uint64_t t = 20; t <= 300; ++t) {
    if (f.dequeue(c, p, t * kMs) == CodelVerdict::kSendMarked) marks.push_back(t);
  }
  EXPECT_TRUE(f.drops.empty());
  // The same times as the drops: 120, then 220, then 220 + 70.71.
  EXPECT_EQ(marks, (std::vector<uint64_t>{120, 220, 291}));
  EXPECT_EQ(c.marks(), 3u);
}

}  // namespace
}  // namespace sluice
