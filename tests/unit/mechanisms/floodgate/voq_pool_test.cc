// Floodgate's VOQs: a destination takes a free VOQ, shares one when none is
// free, releases it when drained; drain follows the windows round-robin.
#include "lib/mechanisms/floodgate/voq_pool.h"

#include <gtest/gtest.h>

#include <vector>

namespace sluice {
namespace {

std::vector<uint64_t> drain_all(VoqPool& pool, DstWindows& w, unsigned budget = 1000) {
  std::vector<uint64_t> out;
  pool.drain(w, budget, [&](const VoqPacket& p) { out.push_back(p.handle); });
  return out;
}

TEST(FgVoq, HeldPacketsLeaveInOrderAsCreditArrives) {
  DstWindows w(8);
  VoqPool pool(4, 16);
  DstWindow* a = w.find_or_add(1, 1000);
  w.debit(*a, 1000);
  for (uint64_t h = 1; h <= 3; ++h) ASSERT_TRUE(pool.hold(*a, VoqPacket{h, 500, 2}));
  EXPECT_EQ(a->voq_packets, 3u);
  EXPECT_EQ(a->voq_bytes, 1500u);
  EXPECT_FALSE(w.may_send(*a, 1));  // something waits: new packets queue behind
  EXPECT_EQ(pool.in_use(), 1u);
  EXPECT_TRUE(drain_all(pool, w).empty());
  w.credit(1, 600);
  EXPECT_EQ(drain_all(pool, w), (std::vector<uint64_t>{1}));
  w.credit(1, 900);  // the window is back at 1000
  EXPECT_EQ(drain_all(pool, w), (std::vector<uint64_t>{2, 3}));
  EXPECT_EQ(a->window, 0);
  EXPECT_EQ(a->voq, kNoVoq);  // released
  EXPECT_EQ(pool.in_use(), 0u);
  EXPECT_EQ(pool.packets(), 0u);
  EXPECT_EQ(pool.bytes(), 0u);
}

TEST(FgVoq, DrainIsRoundRobinOverDestinationsWhoseWindowAllows) {
  DstWindows w(8);
  VoqPool pool(4, 16);
  DstWindow* a = w.find_or_add(1, 0);
  DstWindow* b = w.find_or_add(2, 0);
  DstWindow* c = w.find_or_add(3, 0);
  for (uint64_t h = 0; h < 3; ++h) {
    pool.hold(*a, VoqPacket{10 + h, 100, 0});
    pool.hold(*b, VoqPacket{20 + h, 100, 0});
    pool.hold(*c, VoqPacket{30 + h, 100, 0});
  }
  a->initial = b->initial = 300;  // as if they had started at 300 and spent it
  w.credit(1, 300);
  w.credit(2, 300);  // 3 has no credit: it stays behind
  EXPECT_EQ(drain_all(pool, w), (std::vector<uint64_t>{10, 20, 11, 21, 12, 22}));
  EXPECT_EQ(c->voq_packets, 3u);
}

TEST(FgVoq, DrainStopsAtItsBudget) {
  DstWindows w(8);
  VoqPool pool(2, 16);
  DstWindow* a = w.find_or_add(1, 0);
  for (uint64_t h = 0; h < 5; ++h) pool.hold(*a, VoqPacket{h, 100, 0});
  a->initial = 1000;
  w.credit(1, 1000);
  EXPECT_EQ(drain_all(pool, w, 2).size(), 2u);
  EXPECT_EQ(drain_all(pool, w).size(), 3u);
  EXPECT_EQ(a->window, 500);
}

TEST(FgVoq, ADestinationSharesAVoqWhenNoneIsFreeUntilBothDrain) {
  DstWindows w(8);
  VoqPool pool(2, 16);
  DstWindow* d[3];
  for (uint32_t i = 0; i < 3; ++i) {
    d[i] = w.find_or_add(10 + i, 0);
    d[i]->initial = 1000;
    ASSERT_TRUE(pool.hold(*d[i], VoqPacket{i, 100, 0}));
  }
  EXPECT_EQ(pool.shared.get(), 1u);
  EXPECT_EQ(pool.in_use(), 2u);
  EXPECT_EQ(d[2]->voq, 12u % 2);  // hashed onto an existing VOQ
  // The head of the shared VOQ (dst 10) holds dst 12 behind it.
  w.credit(12, 100);
  EXPECT_TRUE(drain_all(pool, w).empty());
  w.credit(10, 100);
  EXPECT_EQ(drain_all(pool, w), (std::vector<uint64_t>{0, 2}));
  EXPECT_EQ(d[0]->voq, kNoVoq);
  EXPECT_EQ(d[2]->voq, kNoVoq);
  EXPECT_EQ(pool.in_use(), 1u);  // dst 11 still waits in the other
  w.credit(11, 100);
  EXPECT_EQ(drain_all(pool, w), (std::vector<uint64_t>{1}));
  EXPECT_EQ(pool.in_use(), 0u);
}

TEST(FgVoq, APoolOfPacketsRefusesWhenExhaustedAndRecovers) {
  DstWindows w(8);
  VoqPool pool(4, 2);
  DstWindow* a = w.find_or_add(1, 0);
  EXPECT_TRUE(pool.hold(*a, VoqPacket{1, 100, 0}));
  EXPECT_TRUE(pool.hold(*a, VoqPacket{2, 100, 0}));
  EXPECT_FALSE(pool.hold(*a, VoqPacket{3, 100, 0}));
  EXPECT_EQ(a->voq_packets, 2u);
  a->initial = 100;
  w.credit(1, 100);
  EXPECT_EQ(drain_all(pool, w).size(), 1u);
  EXPECT_TRUE(pool.hold(*a, VoqPacket{3, 100, 0}));
}

TEST(FgVoq, BytesForTellsTheVoqAPacketWouldJoin) {
  DstWindows w(8);
  VoqPool pool(1, 8);
  DstWindow* a = w.find_or_add(1, 0);
  DstWindow* b = w.find_or_add(2, 0);
  EXPECT_EQ(pool.bytes_for(*a), 0u);
  pool.hold(*a, VoqPacket{1, 300, 0});
  EXPECT_EQ(pool.bytes_for(*a), 300u);
  EXPECT_EQ(pool.bytes_for(*b), 300u);  // no VOQ free: b would share a's
}

}  // namespace
}  // namespace sluice
