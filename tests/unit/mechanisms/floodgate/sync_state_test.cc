// Floodgate's loss recovery: cumulative counters at both ends of a link and
// FG_SYNC heal lost data and lost credit frames, never credit twice. Time is
// simulated.
#include "lib/mechanisms/floodgate/sync_state.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <utility>
#include <vector>

namespace sluice {
namespace {

constexpr uint32_t kPort = 1;
constexpr uint32_t kDst = 0x0A000203;
constexpr uint64_t kUs = 1000;

SyncEntry only_entry(SyncSender& s, uint32_t port) {
  SyncEntry e[4];
  uint32_t cursor = 0;
  const uint32_t n = s.entries(port, &cursor, e, 4);
  EXPECT_EQ(n, 1u);
  EXPECT_EQ(cursor, s.slots());
  return e[0];
}

TEST(FgSync, SenderReportsItsCumulativeCountersPerPort) {
  SyncSender s(16);
  s.on_sent(kPort, kDst, 1500);
  s.on_sent(kPort, kDst, 500);
  s.on_credit(kPort, kDst, 700);
  s.on_sent(2, kDst, 64);  // another port: its own entry
  const SyncEntry e = only_entry(s, kPort);
  EXPECT_EQ(e.dst_ip, kDst);
  EXPECT_EQ(e.bytes_sent, 2000u);
  EXPECT_EQ(e.credit_received, 700u);
  EXPECT_EQ(only_entry(s, 2).bytes_sent, 64u);
}

TEST(FgSync, SenderListsSplitOverFramesVisitEveryPairOnce) {
  SyncSender s(64);
  for (uint32_t d = 1; d <= 10; ++d) s.on_sent(kPort, d, d);
  std::vector<uint32_t> seen;
  uint32_t cursor = 0;
  SyncEntry e[3];
  while (cursor < s.slots()) {
    const uint32_t n = s.entries(kPort, &cursor, e, 3);
    EXPECT_LE(n, 3u);
    for (uint32_t i = 0; i < n; ++i) seen.push_back(e[i].dst_ip);
  }
  std::sort(seen.begin(), seen.end());
  EXPECT_EQ(seen, (std::vector<uint32_t>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}));
}

TEST(FgSync, ALostDataPacketIsOwedAsCreditOnce) {
  SyncSender up(16);
  SyncReceiver down(16, 20 * kUs);
  up.on_sent(kPort, kDst, 1500);
  down.on_received(kPort, kDst, 1500, 1 * kUs);
  up.on_sent(kPort, kDst, 1000);  // lost on the link
  up.on_sent(kPort, kDst, 1500);
  down.on_received(kPort, kDst, 1500, 3 * kUs);
  SyncHeal h = down.on_sync(kPort, only_entry(up, kPort), 100 * kUs);
  EXPECT_EQ(h.lost_data_bytes, 1000u);
  EXPECT_EQ(h.lost_credit_bytes, 0u);
  EXPECT_EQ(down.healed_data_bytes.get(), 1000u);
  // The next sync finds nothing new.
  h = down.on_sync(kPort, only_entry(up, kPort), 200 * kUs);
  EXPECT_EQ(h.lost_data_bytes, 0u);
  EXPECT_EQ(down.healed_data_bytes.get(), 1000u);
}

TEST(FgSync, ALostCreditFrameIsResentOnceAndAResendLostIsFoundAgain) {
  SyncSender up(16);
  SyncReceiver down(16, 20 * kUs);
  down.on_credit_sent(kPort, kDst, 3000, 10 * kUs);  // this frame is lost
  down.on_credit_sent(kPort, kDst, 2000, 12 * kUs);
  up.on_credit(kPort, kDst, 2000);
  SyncHeal h = down.on_sync(kPort, only_entry(up, kPort), 100 * kUs);
  EXPECT_EQ(h.lost_credit_bytes, 3000u);
  // Not re-sent yet (say delayCredit holds it): the next sync asks nothing more.
  h = down.on_sync(kPort, only_entry(up, kPort), 200 * kUs);
  EXPECT_EQ(h.lost_credit_bytes, 0u);
  // The re-send goes out and is lost too: found again.
  down.on_credit_sent(kPort, kDst, 3000, 210 * kUs);
  h = down.on_sync(kPort, only_entry(up, kPort), 300 * kUs);
  EXPECT_EQ(h.lost_credit_bytes, 3000u);
  // This one arrives: nothing more, ever.
  down.on_credit_sent(kPort, kDst, 3000, 310 * kUs);
  up.on_credit(kPort, kDst, 3000);
  for (uint64_t t = 400; t <= 800; t += 100) {
    EXPECT_EQ(down.on_sync(kPort, only_entry(up, kPort), t * kUs).lost_credit_bytes, 0u) << t;
  }
  EXPECT_EQ(down.healed_credit_bytes.get(), 6000u);
}

TEST(FgSync, CreditStillOnTheWireIsNotJudged) {
  SyncSender up(16);
  SyncReceiver down(16, 20 * kUs);
  down.on_credit_sent(kPort, kDst, 1000, 10 * kUs);
  up.on_credit(kPort, kDst, 1000);
  down.on_credit_sent(kPort, kDst, 4000, 95 * kUs);  // sent 5 us before the sync arrives
  EXPECT_EQ(down.on_sync(kPort, only_entry(up, kPort), 100 * kUs).lost_credit_bytes, 0u);
  up.on_credit(kPort, kDst, 4000);
  EXPECT_EQ(down.on_sync(kPort, only_entry(up, kPort), 200 * kUs).lost_credit_bytes, 0u);
  EXPECT_EQ(down.healed_credit_bytes.get(), 0u);
}

TEST(FgSync, ASyncReportingLessThanArrivedIsCountedAndIgnored) {
  SyncReceiver down(16, 20 * kUs);
  down.on_received(kPort, kDst, 3000, 1 * kUs);
  const SyncHeal h = down.on_sync(kPort, SyncEntry{kDst, 1000, 0}, 100 * kUs);
  EXPECT_EQ(h.lost_data_bytes, 0u);
  EXPECT_EQ(down.sync_behind.get(), 1u);
}

TEST(FgSync, AFullTableCountsInsteadOfHealing) {
  SyncReceiver down(1, 20 * kUs);
  down.on_received(kPort, 1, 100, 0);
  down.on_received(kPort, 2, 100, 0);
  EXPECT_EQ(down.untracked.get(), 1u);
  EXPECT_EQ(down.on_sync(kPort, SyncEntry{2, 500, 0}, kUs).lost_data_bytes, 0u);
  EXPECT_EQ(down.untracked.get(), 2u);
}

// A steady credit stream over a link with 5 us each way, one credit frame
// in ten lost, a sync every 100 us, cut = the 10 us hop RTT. Every lost byte
// is re-sent exactly once, and what is missing at any sync stays within the
// credit sent over cut + cut / 3 (the sampling bound) plus one frame.
TEST(FgSync, UnderSteadyCreditLossesAreHealedWithinABound) {
  constexpr uint64_t kDelay = 5 * kUs, kCut = 10 * kUs, kFrame = 100;
  SyncSender up(16);
  SyncReceiver down(16, kCut);
  std::deque<std::pair<uint64_t, uint64_t>> to_up;  // (arrival, credit bytes)
  std::deque<std::pair<uint64_t, SyncEntry>> to_down;
  uint64_t lost = 0, resent = 0;
  for (uint64_t us = 0; us < 5000; ++us) {
    const uint64_t now = us * kUs;
    while (!to_up.empty() && to_up.front().first <= now) {
      up.on_credit(kPort, kDst, static_cast<uint32_t>(to_up.front().second));
      to_up.pop_front();
    }
    if (!to_down.empty() && to_down.front().first <= now) {
      const SyncHeal h = down.on_sync(kPort, to_down.front().second, now);
      to_down.pop_front();
      resent += h.lost_credit_bytes;
      ASSERT_LE(resent, lost) << us;  // never credits twice
      ASSERT_LE(lost - resent, (kCut + kCut / 3) / kUs * kFrame + kFrame) << us;
      if (h.lost_credit_bytes) {
        down.on_credit_sent(kPort, kDst, static_cast<uint32_t>(h.lost_credit_bytes), now);
        to_up.emplace_back(now + kDelay, h.lost_credit_bytes);
      }
    }
    down.on_credit_sent(kPort, kDst, kFrame, now);
    if (us % 10 == 3) {
      lost += kFrame;
    } else {
      to_up.emplace_back(now + kDelay, kFrame);
    }
    if (us % 100 == 0 && us > 0) to_down.emplace_back(now + kDelay, only_entry(up, kPort));
  }
  EXPECT_GT(resent, 0u);
}

}  // namespace
}  // namespace sluice
