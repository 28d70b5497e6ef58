#include "lib/mechanisms/pfc/pfc_ingress.h"

#include <gtest/gtest.h>

#include <stdexcept>

namespace sluice {
namespace {

constexpr uint64_t k10G = 10'000'000'000ull;
// 0xFFFF quanta at 10 Gb/s = 65535 x 51.2 ns; refresh after half of it.
constexpr uint64_t kPause10G = 3'355'392;
constexpr uint64_t kHalf10G = 1'677'696;

PfcIngressConfig static_config() {
  PfcIngressConfig c;
  c.mode = PfcMode::kPfc;
  c.xoff_bytes = 10'000;
  c.hysteresis_bytes = 3'000;
  c.rate_bps = k10G;
  return c;
}

TEST(PfcIngress, RefusesBadConfigs) {
  PfcIngressConfig c = static_config();
  c.rate_bps = 0;
  EXPECT_THROW(PfcIngress{c}, std::invalid_argument);
  c = static_config();
  c.xoff_quanta = 0;
  EXPECT_THROW(PfcIngress{c}, std::invalid_argument);
  c = static_config();
  c.xoff_bytes = 0;
  EXPECT_THROW(PfcIngress{c}, std::invalid_argument);
  c.dynamic_alpha = -1;
  EXPECT_THROW(PfcIngress{c}, std::invalid_argument);
  c.mode = PfcMode::kOff;  // nothing is checked when off
  PfcIngress off(c);
  off.on_enqueue(0, 1'000'000);
  PfcDecision d;
  EXPECT_FALSE(off.poll(0, 0, &d));
}

TEST(PfcIngress, XoffOnlyAboveThresholdAndOnlyOnce) {
  PfcIngress in(static_config());
  EXPECT_EQ(in.pause_ns(), kPause10G);
  PfcDecision d;
  in.on_enqueue(3, 6'000);
  in.on_enqueue(3, 4'000);  // 10,000: at, not above
  EXPECT_FALSE(in.poll(1'000, 0, &d));
  in.on_enqueue(3, 1);
  ASSERT_TRUE(in.poll(1'000, 0, &d));
  EXPECT_FALSE(d.pause);
  EXPECT_EQ(d.class_enable, 0x08);
  std::array<uint16_t, 8> want = {0, 0, 0, 0xFFFF, 0, 0, 0, 0};
  EXPECT_EQ(d.quanta, want);
  in.on_sent(d, 1'000);
  EXPECT_TRUE(in.in_xoff(3));
  EXPECT_EQ(in.stats().frames_sent.get(), 1u);
  EXPECT_EQ(in.stats().sent[3].get(), 1u);
  EXPECT_EQ(in.stats().xoff[3].get(), 1u);
  in.on_enqueue(3, 50'000);  // further above: no duplicate XOFF
  EXPECT_FALSE(in.poll(2'000, 0, &d));
  EXPECT_FALSE(in.poll(1'000 + kHalf10G - 1, 0, &d));
}

TEST(PfcIngress, UnsentFrameIsAskedForAgain) {
  PfcIngress in(static_config());
  PfcDecision d;
  in.on_enqueue(0, 20'000);
  ASSERT_TRUE(in.poll(0, 0, &d));
  EXPECT_FALSE(in.in_xoff(0));
  ASSERT_TRUE(in.poll(10, 0, &d));  // not committed: still due
  EXPECT_EQ(in.stats().frames_sent.get(), 0u);
}

TEST(PfcIngress, RefreshAtHalfThePauseTime) {
  PfcIngress in(static_config());
  PfcDecision d;
  in.on_enqueue(3, 20'000);
  ASSERT_TRUE(in.poll(1'000, 0, &d));
  in.on_sent(d, 1'000);
  EXPECT_EQ(in.next_refresh_ns(), 1'000 + kHalf10G);
  EXPECT_FALSE(in.poll(1'000 + kHalf10G - 1, 0, &d));
  ASSERT_TRUE(in.poll(1'000 + kHalf10G, 0, &d));
  EXPECT_EQ(d.class_enable, 0x08);
  EXPECT_EQ(d.quanta[3], 0xFFFF);
  in.on_sent(d, 1'000 + kHalf10G);
  EXPECT_EQ(in.next_refresh_ns(), 1'000 + 2 * kHalf10G);
  EXPECT_EQ(in.stats().sent[3].get(), 2u);
  EXPECT_EQ(in.stats().xoff[3].get(), 1u);  // a refresh is not a transition
}

TEST(PfcIngress, XonOnlyAtThresholdMinusHysteresis) {
  PfcIngress in(static_config());
  PfcDecision d;
  in.on_enqueue(3, 10'001);
  ASSERT_TRUE(in.poll(0, 0, &d));
  in.on_sent(d, 0);
  in.on_dequeue(3, 1);  // 10,000: below XOFF but not XON
  EXPECT_FALSE(in.poll(100, 0, &d));
  in.on_dequeue(3, 2'999);  // 7,001
  EXPECT_FALSE(in.poll(200, 0, &d));
  in.on_dequeue(3, 1);  // 7,000 = 10,000 - 3,000
  ASSERT_TRUE(in.poll(300, 0, &d));
  EXPECT_EQ(d.class_enable, 0x08);
  EXPECT_EQ(d.quanta[3], 0);
  in.on_sent(d, 300);
  EXPECT_FALSE(in.in_xoff(3));
  EXPECT_EQ(in.stats().xon[3].get(), 1u);
  EXPECT_EQ(in.next_refresh_ns(), UINT64_MAX);
  EXPECT_FALSE(in.poll(300 + kPause10G, 0, &d));  // no refresh once XON
}

TEST(PfcIngress, OneFrameCarriesEveryPriorityInXoff) {
  PfcIngress in(static_config());
  PfcDecision d;
  in.on_enqueue(1, 15'000);
  ASSERT_TRUE(in.poll(0, 0, &d));
  in.on_sent(d, 0);
  in.on_enqueue(5, 15'000);
  ASSERT_TRUE(in.poll(1'000, 0, &d));
  EXPECT_EQ(d.class_enable, 0x22);  // 5 is new, 1 is refreshed with it
  EXPECT_EQ(d.quanta[1], 0xFFFF);
  EXPECT_EQ(d.quanta[5], 0xFFFF);
  in.on_sent(d, 1'000);
  EXPECT_EQ(in.next_refresh_ns(), 1'000 + kHalf10G);
  // 1 falls to XON while 5 stays: one frame, XON for 1, refresh for 5.
  in.on_dequeue(1, 15'000);
  ASSERT_TRUE(in.poll(2'000, 0, &d));
  EXPECT_EQ(d.class_enable, 0x22);
  EXPECT_EQ(d.quanta[1], 0);
  EXPECT_EQ(d.quanta[5], 0xFFFF);
  EXPECT_EQ(in.stats().frames_sent.get(), 2u);
}

TEST(PfcIngress, OnlyConfiguredPrioritiesPause) {
  PfcIngressConfig c = static_config();
  c.priorities = 0x08;
  PfcIngress in(c);
  PfcDecision d;
  in.on_enqueue(2, 50'000);
  EXPECT_FALSE(in.poll(0, 0, &d));
  in.on_enqueue(3, 50'000);
  ASSERT_TRUE(in.poll(0, 0, &d));
  EXPECT_EQ(d.class_enable, 0x08);
}

TEST(PfcIngress, DynamicThresholdFollowsFreeBuffer) {
  PfcIngressConfig c = static_config();
  c.dynamic_alpha = 0.5;
  c.hysteresis_bytes = 1'000;
  PfcIngress in(c);
  EXPECT_EQ(in.threshold(100'000), 50'000u);
  EXPECT_EQ(in.xon_level(100'000), 49'000u);
  EXPECT_EQ(in.xon_level(1'000), 0u);  // 500 - 1,000 floors at 0
  PfcDecision d;
  in.on_enqueue(0, 40'000);
  EXPECT_FALSE(in.poll(0, 100'000, &d));  // 40,000 <= 50,000
  ASSERT_TRUE(in.poll(0, 60'000, &d));    // 40,000 > 30,000
  EXPECT_EQ(d.quanta[0], 0xFFFF);
  in.on_sent(d, 0);
  EXPECT_FALSE(in.poll(10, 80'000, &d));  // 40,000 > 39,000 = XON level
  ASSERT_TRUE(in.poll(10, 82'000, &d));   // 40,000 <= 41,000 - 1,000
  EXPECT_EQ(d.class_enable, 0x01);
  EXPECT_EQ(d.quanta[0], 0);
}

TEST(PfcIngress, CallerSummedShards) {
  PfcIngress in(static_config());
  PfcIngressBytes a, b;
  a.on_enqueue(4, 6'000);
  b.on_enqueue(4, 5'000);
  b.on_dequeue(4, 500);
  std::array<uint64_t, 8> sum{};
  for (uint32_t c = 0; c < 8; ++c) sum[c] = a.bytes(c) + b.bytes(c);
  EXPECT_EQ(sum[4], 10'500u);
  PfcDecision d;
  ASSERT_TRUE(in.poll(0, sum, 0, &d));
  EXPECT_EQ(d.class_enable, 0x10);
  EXPECT_FALSE(in.poll(0, 0, &d));  // local() is empty
}

TEST(PfcIngress, PauseModeSumsPrioritiesAndSendsPause) {
  PfcIngressConfig c = static_config();
  c.mode = PfcMode::kPause;
  c.xoff_quanta = 1000;
  PfcIngress in(c);
  EXPECT_EQ(in.pause_ns(), 51'200u);
  PfcDecision d;
  in.on_enqueue(0, 6'000);
  EXPECT_FALSE(in.poll(0, 0, &d));
  in.on_enqueue(5, 6'000);  // 12,000 in all
  ASSERT_TRUE(in.poll(0, 0, &d));
  EXPECT_TRUE(d.pause);
  EXPECT_EQ(d.quanta[0], 1000);
  uint8_t buf[60];
  ASSERT_EQ(build_decision_frame(d, buf, 60, {2, 0, 0, 0, 0, 1}), 60u);
  EXPECT_EQ(buf[14], 0x00);  // opcode 0x0001
  EXPECT_EQ(buf[15], 0x01);
  EXPECT_EQ(buf[16], 0x03);  // 1000 = 0x03E8
  EXPECT_EQ(buf[17], 0xE8);
  in.on_sent(d, 0);
  EXPECT_TRUE(in.in_xoff(kAllPriorities));
  EXPECT_EQ(in.stats().sent[kAllPriorities].get(), 1u);
  EXPECT_EQ(in.next_refresh_ns(), 25'600u);
  EXPECT_FALSE(in.poll(25'599, 0, &d));
  ASSERT_TRUE(in.poll(25'600, 0, &d));
  EXPECT_EQ(d.quanta[0], 1000);
  in.on_sent(d, 25'600);
  in.on_dequeue(0, 5'000);  // 7,000
  ASSERT_TRUE(in.poll(25'700, 0, &d));
  EXPECT_TRUE(d.pause);
  EXPECT_EQ(d.quanta[0], 0);
  in.on_sent(d, 25'700);
  EXPECT_FALSE(in.in_xoff(kAllPriorities));
  EXPECT_EQ(in.stats().xoff[kAllPriorities].get(), 1u);
  EXPECT_EQ(in.stats().xon[kAllPriorities].get(), 1u);
}

// The public simulators' MMU (HPCC's and Floodgate's ns-3, switch-mmu.cc):
// the first `reserve` bytes of an (ingress, priority) are its own, and only
// what is beyond them is compared with the threshold.
TEST(PfcIngress, ReserveIsNeitherThresholdNorPool) {
  PfcIngressConfig c = static_config();  // xoff 10,000, hysteresis 3,000
  c.reserve_bytes = 4'096;
  PfcIngress in(c);
  PfcIngressBytes b;
  PfcPoolUse pool;
  b.on_enqueue(0, 4'000, 4'096, UINT64_MAX, pool);
  EXPECT_EQ(pool.reserved.get(), 4'000u);
  b.on_enqueue(0, 10'000, 4'096, UINT64_MAX, pool);  // 14,000: 9,904 beyond the reserve
  EXPECT_EQ(pool.reserved.get(), 4'096u);
  EXPECT_EQ(pool.headroom.get(), 0u);
  PfcDecision d;
  EXPECT_FALSE(in.poll(0, b.snapshot(), {}, 0, &d));
  b.on_enqueue(0, 97, 4'096, UINT64_MAX, pool);  // 10,001 beyond
  ASSERT_TRUE(in.poll(0, b.snapshot(), {}, 0, &d));
  in.on_sent(d, 0);
  b.on_dequeue(0, 1'500, 4'096, pool);  // the shared part leaves first
  EXPECT_EQ(pool.reserved.get(), 4'096u);
  EXPECT_FALSE(in.poll(1, b.snapshot(), {}, 0, &d));  // 8,501 > 7,000
  b.on_dequeue(0, 1'502, 4'096, pool);                // 6,999 <= 7,000
  ASSERT_TRUE(in.poll(1, b.snapshot(), {}, 0, &d));
  EXPECT_EQ(d.quanta[0], 0);
  b.on_dequeue(0, 11'095, 4'096, pool);
  EXPECT_EQ(b.bytes(0), 0u);
  EXPECT_EQ(pool.reserved.get(), 0u);
}

TEST(PfcIngress, PoolFreeIsTheBufferLessSetAsideAndShared) {
  EXPECT_EQ(pfc_pool_free(1'000, 0, 300, 0, 0), 700u);      // the free buffer
  EXPECT_EQ(pfc_pool_free(1'000, 100, 300, 50, 50), 700u);  // 200 shared
  EXPECT_EQ(pfc_pool_free(1'000, 900, 300, 0, 0), 0u);      // floored
  EXPECT_EQ(pfc_pool_free(1'000, 0, 100, 80, 40), 1'000u);  // nothing shared
}

// Bytes that arrive while the priority's shared part is above its threshold
// are headroom: outside the pool, and the priority stays in XOFF until every
// one of them has left, whatever the shared part.
TEST(PfcIngress, HeadroomHoldsXoffUntilItEmpties) {
  PfcIngressConfig c = static_config();
  c.dynamic_alpha = 0.25;
  c.hysteresis_bytes = 3'072;
  c.headroom_bytes = 60'000;
  PfcIngress in(c);
  PfcIngressBytes b;
  PfcPoolUse pool;
  constexpr uint64_t kCap = 1'000'000, kAside = 60'000;
  uint64_t used = 0;
  auto free_pool = [&] {
    return pfc_pool_free(kCap, kAside, used, pool.reserved.get(), pool.headroom.get());
  };
  auto enqueue = [&](uint32_t n) {
    b.on_enqueue(0, n, 0, in.headroom_threshold(free_pool()), pool);
    used += n;
  };
  auto dequeue = [&](uint32_t n) {
    b.on_dequeue(0, n, 0, pool);
    used -= n;
  };
  EXPECT_EQ(in.headroom_threshold(free_pool()), 235'000u);  // (1,000,000 - 60,000) / 4
  enqueue(100'000);
  enqueue(110'000);  // 210,000 against (940,000 - 100,000) / 4 = 210,000: not above
  EXPECT_EQ(pool.headroom.get(), 0u);
  PfcDecision d;
  ASSERT_TRUE(in.poll(0, b.snapshot(), {}, free_pool(), &d));  // 210,000 > 182,500
  in.on_sent(d, 0);
  enqueue(1'500);  // 211,500 > 182,500: headroom
  EXPECT_EQ(b.bytes(0), 210'000u);
  EXPECT_EQ(b.headroom(0), 1'500u);
  EXPECT_EQ(free_pool(), 730'000u);  // headroom bytes are not the pool's
  dequeue(150'000);  // 1,500 from headroom, then 148,500: 61,500 shared
  EXPECT_EQ(b.headroom(0), 0u);
  EXPECT_EQ(b.bytes(0), 61'500u);
  // With a byte still in headroom there is no XON, however low the rest.
  std::array<uint64_t, 8> bytes{}, room{};
  room[0] = 1;
  EXPECT_FALSE(in.poll(1, bytes, room, 1'000'000, &d));
  EXPECT_TRUE(in.poll(1, bytes, {}, 1'000'000, &d));
  EXPECT_EQ(d.quanta[0], 0);
  // And a byte in headroom asks for XOFF on its own.
  in.on_sent(d, 1);
  ASSERT_TRUE(in.poll(2, bytes, room, 1'000'000, &d));
  EXPECT_EQ(d.quanta[0], 0xFFFF);
  // Without headroom accounting nothing is ever classed as headroom.
  PfcIngress plain(static_config());
  EXPECT_EQ(plain.headroom_threshold(0), UINT64_MAX);
}

TEST(PfcIngress, HeadroomByHand) {
  // 10 Gb/s, 1 us each way: 2 us x 1.25 B/ns = 2,500 B in flight; our
  // frame in progress 1514 + 24; the PFC frame 60 + 24; upstream burst 16 KiB.
  EXPECT_EQ(pfc_headroom_bytes(k10G, 1'000, 0, 1514, 16'384), 2'500u + 1'538 + 84 + 16'384);
  // A sender committing less than a frame still has one in progress; 1 ns
  // of reaction at 10 Gb/s is 1.25 B, rounded up.
  EXPECT_EQ(pfc_headroom_bytes(k10G, 0, 1, 1514, 0), 2u + 1'538 + 84 + 1'514);
  EXPECT_EQ(default_pfc_hysteresis_bytes(1500), 3'028u);
}

}  // namespace
}  // namespace sluice
