// Flowtune's per-flow pacer on a simulated clock: send times of a burst at
// the allocated rate, lease expiry → unpaced, queue bound → drops, ECN
// threshold, stale RATE_UPDATEs ignored.
#include "lib/mechanisms/flowtune/flow_pacer.h"

#include <gtest/gtest.h>

#include <stdexcept>

namespace sluice {
namespace {

using Action = FlowPacer::Action;
constexpr uint64_t kUs = 1000;
constexpr uint64_t kMs = 1000 * kUs;

TEST(FlowPacer, BurstIsSpreadAtTheRate) {
  FlowPacer p(16, {});
  p.start(17);
  ASSERT_TRUE(p.set_rate(17, 1'000'000, 0, 10 * kMs));  // 1 Gbit/s
  // 10 × 1250 bytes at time 0: 10 µs apart at 1 Gbit/s.
  for (int i = 0; i < 10; ++i) {
    auto v = p.admit(17, 1250, 0);
    EXPECT_EQ(v.send_at_ns, static_cast<uint64_t>(i) * 10 * kUs);
    EXPECT_EQ(v.action, i == 0 ? Action::kSend : Action::kHold);
  }
  EXPECT_EQ(p.paced.get(), 1u);
  EXPECT_EQ(p.held.get(), 9u);
  EXPECT_EQ(p.held_packets(17), 9u);
  EXPECT_EQ(p.held_bytes(17), 9u * 1250);
  for (int i = 0; i < 9; ++i) p.sent(17, 1250);
  EXPECT_EQ(p.held_packets(17), 0u);
  // After a quiet spell the next packet goes at once.
  EXPECT_EQ(p.admit(17, 1250, 1 * kMs).action, Action::kSend);
}

TEST(FlowPacer, RoundingIsUnderAPicosecondPerPacket) {
  FlowPacer p(16, {1'000'000, 1ull << 40});
  p.start(3);
  p.set_rate(3, 3'000'000, 0, 1'000 * kMs);  // 3 Gbit/s: 1500 B = 4 µs; 1 B = 2.667 ns
  uint64_t t = 0;
  for (int i = 0; i < 3000; ++i) t = p.admit(3, 1, 0).send_at_ns;
  // Packet i is due at i · 8/3 ns: the 3000th (i = 2999) at 7997.33 ns; each
  // packet's cost is rounded down by < 1 ps, so it is off by < 3 ns.
  EXPECT_GE(t, 7995u);
  EXPECT_LE(t, 7998u);
}

TEST(FlowPacer, NoRateOrExpiredLeaseIsUnpaced) {
  FlowPacer p(16, {});
  EXPECT_EQ(p.admit(5, 1500, 0).action, Action::kUnpaced);  // unknown flow
  p.start(5);
  EXPECT_EQ(p.admit(5, 1500, 0).action, Action::kUnpaced);  // no rate yet
  p.set_rate(5, 100'000, 0, 1 * kMs);                       // 100 Mbit/s, 1 ms lease
  EXPECT_TRUE(p.fresh(5, 999 * kUs));
  EXPECT_EQ(p.admit(5, 1500, 0).action, Action::kSend);
  EXPECT_EQ(p.admit(5, 1500, 0).action, Action::kHold);
  EXPECT_FALSE(p.fresh(5, 1 * kMs));
  auto v = p.admit(5, 1500, 1 * kMs);  // lease over
  EXPECT_EQ(v.action, Action::kUnpaced);
  EXPECT_EQ(v.send_at_ns, 1 * kMs);
  EXPECT_EQ(p.unpaced.get(), 3u);
  // A fresh RATE_UPDATE renews the lease.
  p.set_rate(5, 100'000, 2 * kMs, 1 * kMs);
  EXPECT_EQ(p.admit(5, 1500, 2 * kMs).action, Action::kSend);
  // Rate 0 is no rate.
  p.set_rate(5, 0, 2 * kMs, 1 * kMs);
  EXPECT_EQ(p.admit(5, 1500, 2 * kMs).action, Action::kUnpaced);
}

TEST(FlowPacer, QueueBoundDropsAreCounted) {
  FlowPacer p(16, {4, 1ull << 40});
  p.start(2);
  p.set_rate(2, 1'000, 0, 1000 * kMs);  // 1 Mbit/s: 1500 B = 12 ms
  EXPECT_EQ(p.admit(2, 1500, 0).action, Action::kSend);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(p.admit(2, 1500, 0).action, Action::kHold);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(p.admit(2, 1500, 0).action, Action::kDrop);
  EXPECT_EQ(p.dropped.get(), 3u);
  EXPECT_EQ(p.held_packets(2), 4u);
  // A dropped packet does not push the schedule: the next held one is 5th.
  p.sent(2, 1500);
  auto v = p.admit(2, 1500, 0);
  EXPECT_EQ(v.action, Action::kHold);
  EXPECT_EQ(v.send_at_ns, 5 * 12 * kMs);
}

TEST(FlowPacer, EcnMarksAboveTheHeldBytesThreshold) {
  FlowPacer p(16, {100, 3000});
  p.start(9);
  p.set_rate(9, 1'000'000, 0, 10 * kMs);
  EXPECT_FALSE(p.admit(9, 1000, 0).ecn_mark);  // sent, not held
  EXPECT_FALSE(p.admit(9, 1000, 0).ecn_mark);  // held 1000
  EXPECT_FALSE(p.admit(9, 1000, 0).ecn_mark);  // 2000
  EXPECT_FALSE(p.admit(9, 1000, 0).ecn_mark);  // 3000: not above
  EXPECT_TRUE(p.admit(9, 1000, 0).ecn_mark);   // 4000
  EXPECT_EQ(p.marked.get(), 1u);
  p.sent(9, 1000);
  p.sent(9, 1000);
  EXPECT_FALSE(p.admit(9, 1000, 0).ecn_mark);  // 3000 again
}

TEST(FlowPacer, StaleIdsAreIgnoredAndStartResets) {
  FlowPacer p(16, {});
  const uint32_t old_id = (1u << 4) | 3, new_id = (2u << 4) | 3;  // same slot 3
  p.start(old_id);
  p.set_rate(old_id, 1'000, 0, 10 * kMs);
  p.admit(old_id, 1500, 0);
  p.admit(old_id, 1500, 0);
  p.start(new_id);  // next flowlet in the slot
  EXPECT_EQ(p.held_packets(new_id), 0u);
  EXPECT_FALSE(p.set_rate(old_id, 5'000, 0, 10 * kMs));
  EXPECT_EQ(p.stale.get(), 1u);
  EXPECT_EQ(p.rate_kbps(new_id), 0u);
  EXPECT_EQ(p.admit(old_id, 1500, 0).action, Action::kUnpaced);
}

TEST(FlowPacer, RejectsBadCapacity) {
  EXPECT_THROW(FlowPacer(0, {}), std::invalid_argument);
  EXPECT_THROW(FlowPacer(12, {}), std::invalid_argument);
}

}  // namespace
}  // namespace sluice
