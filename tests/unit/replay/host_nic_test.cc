// The host NIC model on a simulated clock. Expected start times are worked
// out by hand: at 10 Gb/s a 1000-byte frame plus 24 bytes of overhead takes
// 8192 bits = 819.2 ns; at 1 Gb/s a 101-byte frame plus 24 takes 1000 ns and
// one pause quantum is 512 ns.
#include "lib/replay/host_nic.h"

#include <gtest/gtest.h>

#include <array>
#include <deque>
#include <vector>

#include "lib/pfc/pause_frame.h"

namespace sluice {
namespace {

constexpr uint64_t k1G = 1'000'000'000;
constexpr uint64_t k10G = 10'000'000'000;

// Starts of `count` frames of `bytes`, all due at due_ns, sent back to back.
std::vector<uint64_t> back_to_back(HostNic& nic, uint64_t due_ns, uint32_t bytes, int count) {
  std::vector<uint64_t> starts;
  for (int i = 0; i < count; ++i) {
    const uint64_t s = nic.start_ns(due_ns);
    EXPECT_TRUE(nic.poll(s));
    starts.push_back(s);
    nic.sent(s, bytes);
  }
  return starts;
}

TEST(HostNic, FramesDueAtOnceLeaveSpacedBySerialisationTime) {
  HostNic nic(k10G, 24);
  // k * 819.2 ns rounded up: the wire time is kept exactly, so the error never grows.
  EXPECT_EQ(back_to_back(nic, 0, 1000, 6), (std::vector<uint64_t>{0, 820, 1639, 2458, 3277, 4096}));
  // A frame due after the wire is free starts when due.
  EXPECT_EQ(nic.start_ns(10'000), 10'000u);
  nic.sent(10'000, 1000);
  EXPECT_EQ(nic.start_ns(10'100), 10'820u);  // 10'000 + 819.2, rounded up
}

TEST(HostNic, LongRunRateIsExact) {
  HostNic nic(k10G, 24);
  const std::vector<uint64_t> s = back_to_back(nic, 0, 1000, 10'001);
  EXPECT_EQ(s.back(), 8'192'000u);  // 10'000 frames x 819.2 ns, exactly
}

TEST(HostNic, RateZeroIsTransparent) {
  HostNic nic;
  EXPECT_FALSE(nic.enabled());
  nic.sent(100, 1500);
  EXPECT_EQ(nic.start_ns(100), 100u);
  nic.pause(50, 1'000'000);
  EXPECT_TRUE(nic.poll(60));
  EXPECT_EQ(nic.paused_ns(2'000'000), 0u);
}

TEST(HostNic, PauseHoldsUntilExpiry) {
  HostNic nic(k1G, 24);
  nic.pause(1000, 5000);
  EXPECT_TRUE(nic.poll(999)) << "a pause takes effect when received, not before";
  EXPECT_FALSE(nic.poll(1000));
  EXPECT_FALSE(nic.poll(5999));
  EXPECT_EQ(nic.paused_ns(5999), 4999u);
  EXPECT_TRUE(nic.poll(6000));
  // A frame that came due during the pause starts at its end.
  EXPECT_EQ(nic.start_ns(2000), 6000u);
  EXPECT_EQ(nic.paused_ns(6000), 5000u);
  EXPECT_EQ(nic.paused_ns(1'000'000), 5000u);
}

TEST(HostNic, ZeroResumesAtOnce) {
  HostNic nic(k1G, 24);
  nic.pause(1000, 5000);
  nic.pause(3000, 0);
  EXPECT_FALSE(nic.poll(2999));
  EXPECT_TRUE(nic.poll(3000));
  EXPECT_EQ(nic.start_ns(0), 3000u);
  EXPECT_EQ(nic.paused_ns(10'000), 2000u);
  // A resume while not paused changes nothing.
  nic.pause(20'000, 0);
  EXPECT_TRUE(nic.poll(20'000));
  EXPECT_EQ(nic.start_ns(20'000), 20'000u);
  EXPECT_EQ(nic.paused_ns(30'000), 2000u);
}

TEST(HostNic, RefreshReplacesTheEndTime) {
  HostNic nic(k1G, 24);
  nic.pause(1000, 5000);
  nic.pause(4000, 5000);  // extends to 9000
  EXPECT_FALSE(nic.poll(8999));
  EXPECT_TRUE(nic.poll(9000));
  EXPECT_EQ(nic.paused_ns(9000), 8000u);
  nic.pause(10'000, 5000);
  nic.pause(11'000, 1000);  // shortens to 12'000
  EXPECT_FALSE(nic.poll(11'999));
  EXPECT_TRUE(nic.poll(12'000));
  EXPECT_EQ(nic.paused_ns(50'000), 8000u + 2000);
}

TEST(HostNic, FutureFramesTakeEffectInTimeOrder) {
  HostNic nic(k1G, 24);
  // Both received (stamped) ahead of the clock: two separate pauses.
  nic.pause(100, 10);
  nic.pause(130, 10);
  EXPECT_TRUE(nic.poll(99));
  EXPECT_FALSE(nic.poll(105));
  EXPECT_TRUE(nic.poll(120));
  EXPECT_FALSE(nic.poll(135));
  EXPECT_TRUE(nic.poll(140));
  EXPECT_EQ(nic.paused_ns(200), 20u);
}

TEST(HostNic, FrameStampedBeforeTheLastPollCountsFromThatPoll) {
  HostNic nic(k1G, 24);
  EXPECT_TRUE(nic.poll(500));
  nic.pause(300, 1000);  // would have ended at 1300; counts as received at 500
  EXPECT_FALSE(nic.poll(500));
  EXPECT_FALSE(nic.poll(1499));
  EXPECT_TRUE(nic.poll(1500));
  EXPECT_EQ(nic.paused_ns(2000), 1000u);
}

TEST(HostNic, ManyPendingFramesAreAllApplied) {
  HostNic nic(k1G, 24);
  // 20 pauses ahead of the clock, 100 ns each, 1000 ns apart: more than are held pending.
  for (uint64_t i = 0; i < 20; ++i) nic.pause(1000 * (i + 1), 100);
  for (uint64_t t = 0; t <= 21'000; t += 50) nic.poll(t);
  EXPECT_EQ(nic.paused_ns(21'000), 2000u);
}

// Drives the model as the capture port does: frames in file order, each
// leaving once the host may send and its start time has come.
struct Sent {
  size_t frame;
  uint64_t start_ns, polled_ns;
  bool operator==(const Sent&) const = default;
};

TEST(HostNic, PausedBacklogLeavesInOrderAtLineRate) {
  HostNic nic(k1G, 24);
  const std::vector<uint64_t> due = {0, 0, 0, 500, 10'000, 10'000};
  std::deque<size_t> waiting = {0, 1, 2, 3, 4, 5};
  std::vector<Sent> sent;
  nic.pause(1500, 2048);  // 4 quanta at 1 Gb/s
  for (uint64_t now = 0; now <= 20'000; now += 100) {
    if (!nic.poll(now)) continue;
    while (!waiting.empty() && nic.start_ns(due[waiting.front()]) <= now) {
      const uint64_t s = nic.start_ns(due[waiting.front()]);
      nic.sent(s, 101);
      sent.push_back({waiting.front(), s, now});
      waiting.pop_front();
    }
  }
  // Paused [1500, 3548): 4 quanta x 512 ns. Frame 2 (would start at 2000)
  // waits for the end; frame 3 follows one frame time (1000 ns) later.
  const std::vector<Sent> expected = {{0, 0, 0},       {1, 1000, 1000},     {2, 3548, 3600},
                                      {3, 4548, 4600}, {4, 10'000, 10'000}, {5, 11'000, 11'000}};
  EXPECT_EQ(sent, expected);
  EXPECT_EQ(nic.paused_ns(20'000), 2048u);
}

TEST(HostPauseNs, Pause) {
  std::array<uint8_t, 64> f{};
  const MacAddr src = {2, 0, 0, 0, 0, 9};
  ASSERT_EQ(build_pause_frame(f.data(), 64, src, 100), 60u);
  EXPECT_EQ(host_pause_ns(f.data(), 60, k10G), 5120u);  // 100 x 51.2 ns
  EXPECT_EQ(host_pause_ns(f.data(), 60, k1G), 51'200u);
  ASSERT_EQ(build_pause_frame(f.data(), 64, src, 0), 60u);
  EXPECT_EQ(host_pause_ns(f.data(), 60, k10G), 0u);
  ASSERT_EQ(build_pause_frame(f.data(), 64, src, 0xFFFF), 60u);
  EXPECT_EQ(host_pause_ns(f.data(), 60, k10G), 3'355'392u);
}

TEST(HostPauseNs, PfcLongestEnabledClass) {
  std::array<uint8_t, 64> f{};
  const MacAddr src = {2, 0, 0, 0, 0, 9};
  std::array<uint16_t, kPfcClasses> q{};
  q[1] = 0;
  q[3] = 7;
  q[5] = 999;  // not enabled: build_pfc_frame sends it as 0 anyway
  ASSERT_EQ(build_pfc_frame(f.data(), 64, src, 0b0000'1010, q), 60u);
  EXPECT_EQ(host_pause_ns(f.data(), 60, k10G), 359u);  // 7 x 51.2 = 358.4, rounded up
  // Times of classes that are not enabled are ignored (class 3 keeps 7, class 5 gets 0xE7).
  f[14 + 2 + 1] = 0b0000'0010;  // enable vector low octet: class 1 only
  f[14 + 4 + 2 * 5 + 1] = 0xE7;
  EXPECT_EQ(host_pause_ns(f.data(), 60, k10G), 0u) << "class 1 has time 0: resume";
  ASSERT_EQ(build_pfc_frame(f.data(), 64, src, 0xFF, std::array<uint16_t, kPfcClasses>{}), 60u);
  EXPECT_EQ(host_pause_ns(f.data(), 60, k10G), 0u);
  ASSERT_EQ(build_pfc_frame(f.data(), 64, src, 0, q), 60u);
  EXPECT_EQ(host_pause_ns(f.data(), 60, k10G), std::nullopt) << "no class enabled";
}

TEST(HostPauseNs, NotAPauseFrame) {
  std::array<uint8_t, 64> f{};
  const MacAddr src = {2, 0, 0, 0, 0, 9};
  ASSERT_EQ(build_pause_frame(f.data(), 64, src, 100), 60u);
  EXPECT_EQ(host_pause_ns(f.data(), 17, k10G), std::nullopt) << "body too short";
  EXPECT_EQ(host_pause_ns(f.data(), 13, k10G), std::nullopt) << "no type";
  auto other = f;
  other[5] = 0x02;  // another reserved address
  EXPECT_EQ(host_pause_ns(other.data(), 60, k10G), std::nullopt);
  other = f;
  other[13] = 0x09;  // type 0x8809 (slow protocols)
  EXPECT_EQ(host_pause_ns(other.data(), 60, k10G), std::nullopt);
  other = f;
  other[15] = 0x02;  // opcode 0x0002 (GATE)
  EXPECT_EQ(host_pause_ns(other.data(), 60, k10G), std::nullopt);
  other = f;
  other[12] = 0x81;  // VLAN-tagged: not recognised
  other[13] = 0x00;
  EXPECT_EQ(host_pause_ns(other.data(), 60, k10G), std::nullopt);
}

}  // namespace
}  // namespace sluice
