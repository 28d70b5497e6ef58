// One Floodgate switch's admission step as the data path drives it:
// window or VOQ, the VOQ charged to the shared buffer and judged by its
// threshold, voq_ecn, dstPause at its thresholds, delayCredit's test, and
// a small two-hop chain run on a simulated clock in which the downstream's
// credit is the only thing that lets the upstream send.
#include "lib/mechanisms/floodgate/floodgate_switch.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <vector>

namespace sluice {
namespace {

constexpr uint32_t kDst = 0x0A000401;  // 10.0.4.1
constexpr uint32_t kPkt = 1000;

FgPacket packet(uint64_t handle, uint32_t dst = kDst, uint32_t initial = 3000,
                uint32_t host_in = kNotHostPort) {
  FgPacket p;
  p.handle = handle;
  p.dst = dst;
  p.bytes = kPkt;
  p.egress = 7;
  p.initial = initial;
  p.host_in = host_in;
  p.ecn_capable = true;
  return p;
}

std::vector<uint64_t> drain(FloodgateSwitch& fg) {
  std::vector<uint64_t> out;
  fg.drain(100, [&](const VoqPacket& p) { out.push_back(p.handle); });
  return out;
}

TEST(FgSwitch, TheWindowLetsPacketsByThenTheVoqHoldsThemInOrder) {
  SharedBuffer buf(1'000'000, 1.0);
  FloodgateSwitch fg(FloodgateSwitchConfig{}, &buf);
  for (uint64_t h = 1; h <= 3; ++h) EXPECT_EQ(fg.admit(packet(h)).verdict, FgVerdict::kSend);
  EXPECT_EQ(fg.windows().find(kDst)->window, 0);
  EXPECT_EQ(buf.used(), 0u);  // sent packets are the egress queue's to charge
  for (uint64_t h = 4; h <= 6; ++h) EXPECT_EQ(fg.admit(packet(h)).verdict, FgVerdict::kHeld);
  EXPECT_EQ(buf.used(), 3 * kPkt);  // held bytes are the switch's
  EXPECT_EQ(fg.held_packets.get(), 3u);
  EXPECT_EQ(fg.peak_voq_bytes.get(), 3 * kPkt);
  EXPECT_TRUE(drain(fg).empty());
  fg.credit(0, kDst, 2 * kPkt);
  EXPECT_EQ(drain(fg), (std::vector<uint64_t>{4, 5}));
  EXPECT_EQ(buf.used(), kPkt);  // released as they leave the VOQ
  // A new packet may not overtake the one still held, whatever the window.
  fg.credit(0, kDst, kPkt);
  EXPECT_EQ(fg.admit(packet(7)).verdict, FgVerdict::kHeld);
  EXPECT_EQ(drain(fg), (std::vector<uint64_t>{6}));
  EXPECT_EQ(fg.windows().find(kDst)->window, 0);
}

TEST(FgSwitch, CreditNeverLiftsAWindowAboveItsInitialValue) {
  SharedBuffer buf(1'000'000, 1.0);
  FloodgateSwitch fg(FloodgateSwitchConfig{}, &buf);
  ASSERT_EQ(fg.admit(packet(1)).verdict, FgVerdict::kSend);
  fg.credit(0, kDst, 5 * kPkt);  // 1000 owed, 4000 never sent
  EXPECT_EQ(fg.windows().find(kDst)->window, 3000);
  EXPECT_EQ(fg.windows().invalid_credit_bytes.get(), 4 * kPkt);
  fg.credit(0, 0x0A000499, kPkt);  // a destination never sent to
  EXPECT_EQ(fg.windows().invalid_credit_bytes.get(), 5 * kPkt);
  EXPECT_EQ(fg.credit_bytes.get(), 6 * kPkt);
}

TEST(FgSwitch, RefundGivesARefusedPacketsBytesBack) {
  SharedBuffer buf(1'000'000, 1.0);
  FloodgateSwitch fg(FloodgateSwitchConfig{}, &buf);
  ASSERT_EQ(fg.admit(packet(1)).verdict, FgVerdict::kSend);
  fg.refund(kDst, kPkt);  // the egress queue refused it
  EXPECT_EQ(fg.windows().find(kDst)->window, 3000);
  EXPECT_EQ(fg.windows().invalid_credit_bytes.get(), 0u);
}

// Refusals at the VOQ count as voq_full whichever limit refused them.
TEST(FgSwitch, TheVoqIsJudgedByTheSharedBufferAndThePoolSize) {
  // Buffer of 2.5 packets: the third held packet finds no room.
  SharedBuffer small(2500, 8.0);
  FloodgateSwitch fg(FloodgateSwitchConfig{}, &small);
  for (uint64_t h = 1; h <= 3; ++h) ASSERT_EQ(fg.admit(packet(h)).verdict, FgVerdict::kSend);
  EXPECT_EQ(fg.admit(packet(4)).verdict, FgVerdict::kHeld);
  EXPECT_EQ(fg.admit(packet(5)).verdict, FgVerdict::kHeld);
  FgAdmission a = fg.admit(packet(6));
  EXPECT_EQ(a.verdict, FgVerdict::kRefused);
  EXPECT_EQ(a.reason, DropReason::kVoqFull);  // the buffer is full
  // Dynamic threshold: alpha 1 of 10000 free lets one queue reach 5000.
  SharedBuffer dt(10'000, 1.0);
  FloodgateSwitch fg2(FloodgateSwitchConfig{}, &dt);
  for (uint64_t h = 1; h <= 3; ++h) ASSERT_EQ(fg2.admit(packet(h)).verdict, FgVerdict::kSend);
  unsigned held = 0;
  while (fg2.admit(packet(10 + held)).verdict == FgVerdict::kHeld) ++held;
  EXPECT_EQ(held, 5u);
  EXPECT_EQ(fg2.admit(packet(99)).verdict, FgVerdict::kRefused);  // past the threshold
  // The pool of packet slots.
  SharedBuffer big(1'000'000, 1.0);
  FloodgateSwitchConfig c;
  c.voq_packets = 2;
  FloodgateSwitch fg3(c, &big);
  for (uint64_t h = 1; h <= 3; ++h) ASSERT_EQ(fg3.admit(packet(h)).verdict, FgVerdict::kSend);
  EXPECT_EQ(fg3.admit(packet(4)).verdict, FgVerdict::kHeld);
  EXPECT_EQ(fg3.admit(packet(5)).verdict, FgVerdict::kHeld);
  a = fg3.admit(packet(6));
  EXPECT_EQ(a.verdict, FgVerdict::kRefused);
  EXPECT_EQ(a.reason, DropReason::kVoqFull);
  EXPECT_EQ(big.used(), 2 * kPkt);  // a refused packet charges nothing
}

TEST(FgSwitch, DiscardEmptiesTheVoqsAndReleasesTheirBuffer) {
  SharedBuffer buf(1'000'000, 1.0);
  FloodgateSwitch fg(FloodgateSwitchConfig{}, &buf);
  // Two destinations, four packets each: three fit each window, one waits.
  for (uint64_t h = 1; h <= 8; ++h) fg.admit(packet(h, kDst + h % 2));
  ASSERT_EQ(fg.voqs().packets(), 2u);
  std::vector<uint64_t> out;
  fg.discard([&](const VoqPacket& p) { out.push_back(p.handle); });
  std::sort(out.begin(), out.end());
  EXPECT_EQ(out, (std::vector<uint64_t>{7, 8}));
  EXPECT_EQ(fg.voqs().packets(), 0u);
  EXPECT_EQ(fg.voqs().in_use(), 0u);
  EXPECT_EQ(buf.used(), 0u);
}

TEST(FgSwitch, AFullWindowTableSendsUncontrolled) {
  SharedBuffer buf(1'000'000, 1.0);
  FloodgateSwitchConfig c;
  c.max_destinations = 1;
  FloodgateSwitch fg(c, &buf);
  EXPECT_EQ(fg.admit(packet(1, kDst)).verdict, FgVerdict::kSend);
  EXPECT_EQ(fg.admit(packet(2, kDst + 1)).verdict, FgVerdict::kUncontrolled);
  EXPECT_EQ(fg.uncontrolled_packets.get(), 1u);
  EXPECT_EQ(fg.windows().table_full.get(), 1u);
}

TEST(FgSwitch, VoqEcnMarksEcnCapablePacketsAboveItsThreshold) {
  SharedBuffer buf(1'000'000, 1.0);
  FloodgateSwitchConfig c;
  c.voq_ecn_bytes = 1500;
  FloodgateSwitch fg(c, &buf);
  for (uint64_t h = 1; h <= 3; ++h) ASSERT_EQ(fg.admit(packet(h)).verdict, FgVerdict::kSend);
  EXPECT_EQ(fg.admit(packet(4)).verdict, FgVerdict::kHeld);        // VOQ held 0
  EXPECT_EQ(fg.admit(packet(5)).verdict, FgVerdict::kHeld);        // 1000
  EXPECT_EQ(fg.admit(packet(6)).verdict, FgVerdict::kHeldMarked);  // 2000 > 1500
  FgPacket not_ect = packet(7);
  not_ect.ecn_capable = false;
  EXPECT_EQ(fg.admit(not_ect).verdict, FgVerdict::kHeld);
  EXPECT_EQ(fg.voq_marks.get(), 1u);
}

TEST(FgSwitch, DstPauseAtItsThresholdAndResumeBelowTheHysteresis) {
  SharedBuffer buf(1'000'000, 1.0);
  FloodgateSwitchConfig c;
  c.dst_pause = true;
  c.dst_pause_bytes = 2500;
  c.dst_pause_hysteresis_bytes = 1000;
  FloodgateSwitch fg(c, &buf);
  EXPECT_EQ(fg.admit(packet(1, kDst, 3000, 0)).pause, DstPauseSignal::kNone);
  EXPECT_EQ(fg.admit(packet(2, kDst, 3000, 0)).pause, DstPauseSignal::kNone);
  // Another host's bytes are its own count.
  EXPECT_EQ(fg.admit(packet(3, kDst, 3000, 1)).pause, DstPauseSignal::kNone);
  const FgAdmission a = fg.admit(packet(4, kDst, 3000, 0));  // 3000 > 2500, held
  EXPECT_EQ(a.verdict, FgVerdict::kHeld);
  EXPECT_EQ(a.pause, DstPauseSignal::kPause);
  EXPECT_EQ(fg.left(0, kDst, kPkt), DstPauseSignal::kNone);    // 2000 > 1500
  EXPECT_EQ(fg.left(0, kDst, kPkt), DstPauseSignal::kResume);  // 1000 <= 1500
  EXPECT_EQ(fg.left(kNotHostPort, kDst, kPkt), DstPauseSignal::kNone);
}

TEST(FgSwitch, DelayCreditWithholdsWhileTheVoqHoldsMoreThanItsLimit) {
  SharedBuffer buf(1'000'000, 1.0);
  FloodgateSwitchConfig c;
  c.delay_credit_bytes = 1500;
  FloodgateSwitch fg(c, &buf);
  for (uint64_t h = 1; h <= 3; ++h) ASSERT_EQ(fg.admit(packet(h)).verdict, FgVerdict::kSend);
  EXPECT_FALSE(fg.withhold(kDst));
  fg.admit(packet(4));
  EXPECT_FALSE(fg.withhold(kDst));  // 1000
  fg.admit(packet(5));
  EXPECT_TRUE(fg.withhold(kDst));  // 2000
  EXPECT_FALSE(fg.withhold(kDst + 1));
  fg.credit(0, kDst, kPkt);
  drain(fg);
  EXPECT_FALSE(fg.withhold(kDst));
  c.delay_credit_bytes = 0;  // off
  FloodgateSwitch off(c, &buf);
  EXPECT_FALSE(off.withhold(kDst));
}

// An upstream switch U sends toward one destination through downstream D,
// whose egress toward the host drains one packet per microsecond; D credits
// U when a packet leaves it, and the credit takes `delay` to arrive. U's
// window alone bounds what D holds, however fast U's sources push.
TEST(FgSwitch, CreditFromDownstreamBoundsWhatTheDownstreamHolds) {
  SharedBuffer ub(10'000'000, 8.0);
  FloodgateSwitch up(FloodgateSwitchConfig{}, &ub);
  const uint32_t initial = 8 * kPkt;
  constexpr uint64_t kDelay = 3;                               // us, credit one-way
  std::deque<uint64_t> at_d;                                   // packets in D's egress queue
  std::deque<std::pair<uint64_t, uint32_t>> credit_in_flight;  // (arrives at, bytes)
  uint64_t next = 1, delivered = 0;
  size_t most_at_d = 0;
  for (uint64_t t = 0; t < 2000; ++t) {
    // Credit arrives, then the VOQ drains into the wire toward D.
    while (!credit_in_flight.empty() && credit_in_flight.front().first <= t) {
      up.credit(0, kDst, credit_in_flight.front().second);
      credit_in_flight.pop_front();
    }
    std::vector<uint64_t> sent = drain(up);
    // Sources push 3 packets per us: three times what D can send.
    for (int i = 0; i < 3 && next < 3000; ++i, ++next) {
      if (up.admit(packet(next, kDst, initial)).verdict == FgVerdict::kSend) sent.push_back(next);
    }
    for (uint64_t h : sent) at_d.push_back(h);
    most_at_d = std::max(most_at_d, at_d.size());
    if (!at_d.empty()) {  // D transmits one and credits U
      at_d.pop_front();
      ++delivered;
      credit_in_flight.emplace_back(t + kDelay, kPkt);
    }
  }
  EXPECT_LE(most_at_d, initial / kPkt);
  EXPECT_GT(delivered, 1900u);         // the window never starved D's link
  EXPECT_GT(up.voqs().packets(), 0u);  // the excess waits upstream
  EXPECT_EQ(up.windows().invalid_credit_bytes.get(), 0u);
}

}  // namespace
}  // namespace sluice
