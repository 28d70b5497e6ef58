// pFabric's switch queue (lib/tm/pfabric/pfabric_queue.h) against the rules of
// "pFabric: Minimal Near-Optimal Datacenter Transport", section 4.1: the
// earliest packet of the flow holding the smallest rank goes first; a packet
// that does not fit drops the largest rank among the queued and itself (of
// equal ranks the latest arrival). Time is simulated.
#include "lib/tm/pfabric/pfabric_queue.h"

#include <gtest/gtest.h>

#include <vector>

namespace sluice {
namespace {

// A packet whose aux names it in the test.
TmPacket packet(uint16_t name, uint32_t bytes) {
  TmPacket p;
  p.bytes = bytes;
  p.aux = name;
  return p;
}

struct Q {
  explicit Q(uint64_t capacity) : q(capacity) {}
  PfabricQueue q;
  TmPacket evicted[8];
  unsigned n_evicted = 0;
  uint64_t now = 0;
  bool add(uint16_t name, uint32_t bytes, uint64_t flow, uint32_t rank) {
    now += 100;
    return q.enqueue(now, packet(name, bytes), flow, rank, evicted, 8, &n_evicted);
  }
  std::vector<uint16_t> evicted_names() const {
    std::vector<uint16_t> v;
    for (unsigned i = 0; i < n_evicted; ++i) v.push_back(evicted[i].aux);
    return v;
  }
  std::vector<uint16_t> drain_order() {
    std::vector<uint16_t> v;
    TmPacket p;
    while (q.dequeue(&p)) v.push_back(p.aux);
    return v;
  }
};

TEST(PfabricQueue, SmallestRankGoesFirst) {
  Q t(100'000);
  ASSERT_TRUE(t.add(1, 1000, /*flow=*/10, /*rank=*/30'000));
  ASSERT_TRUE(t.add(2, 1000, 20, 10'000));
  ASSERT_TRUE(t.add(3, 1000, 30, 20'000));
  EXPECT_EQ(t.drain_order(), (std::vector<uint16_t>{2, 3, 1}));
  EXPECT_EQ(t.q.packets(), 0u);
  EXPECT_EQ(t.q.bytes(), 0u);
}

// The flow of the smallest rank sends its earliest packet, even though a
// later packet of it holds that rank (no reordering, no starving the head).
TEST(PfabricQueue, ChosenFlowSendsItsEarliestPacket) {
  Q t(100'000);
  ASSERT_TRUE(t.add(1, 1000, 10, 50'000));  // flow 10, rank 50 KB
  ASSERT_TRUE(t.add(2, 1000, 20, 40'000));  // flow 20
  ASSERT_TRUE(t.add(3, 1000, 10, 10'000));  // flow 10 again, now ranking first
  TmPacket p;
  ASSERT_TRUE(t.q.dequeue(&p));
  EXPECT_EQ(p.aux, 1);  // flow 10's head, though its rank (50 KB) is the largest
  ASSERT_TRUE(t.q.dequeue(&p));
  EXPECT_EQ(p.aux, 3);  // flow 10 still holds the smallest rank
  ASSERT_TRUE(t.q.dequeue(&p));
  EXPECT_EQ(p.aux, 2);
  EXPECT_FALSE(t.q.dequeue(&p));
}

TEST(PfabricQueue, EqualSmallestRanksGoInArrivalOrder) {
  Q t(100'000);
  ASSERT_TRUE(t.add(1, 1000, 10, 7000));
  ASSERT_TRUE(t.add(2, 1000, 20, 5000));
  ASSERT_TRUE(t.add(3, 1000, 30, 5000));
  ASSERT_TRUE(t.add(4, 1000, 20, 5000));
  // Three packets tie at 5000: each time the earliest-queued of them picks
  // the flow (2, then 3, then 4), before the larger rank.
  EXPECT_EQ(t.drain_order(), (std::vector<uint16_t>{2, 3, 4, 1}));
}

TEST(PfabricQueue, ArrivalWithTheLargestRankIsRefused) {
  Q t(3000);
  ASSERT_TRUE(t.add(1, 1000, 10, 100));
  ASSERT_TRUE(t.add(2, 1000, 20, 200));
  ASSERT_TRUE(t.add(3, 1000, 30, 300));
  EXPECT_FALSE(t.add(4, 1000, 40, 400));
  EXPECT_EQ(t.n_evicted, 0u);
  // A tie with the queued largest rank: the arrival is the latest, so it goes.
  EXPECT_FALSE(t.add(5, 1000, 50, 300));
  EXPECT_EQ(t.n_evicted, 0u);
  EXPECT_EQ(t.q.packets(), 3u);
  EXPECT_EQ(t.q.bytes(), 3000u);
  EXPECT_EQ(t.drain_order(), (std::vector<uint16_t>{1, 2, 3}));
}

TEST(PfabricQueue, QueuedLargestRankIsEvicted) {
  Q t(3000);
  ASSERT_TRUE(t.add(1, 1000, 10, 100));
  ASSERT_TRUE(t.add(2, 1000, 20, 900));
  ASSERT_TRUE(t.add(3, 1000, 30, 300));
  ASSERT_TRUE(t.add(4, 1000, 40, 200));
  EXPECT_EQ(t.evicted_names(), (std::vector<uint16_t>{2}));
  EXPECT_EQ(t.q.bytes(), 3000u);
  EXPECT_EQ(t.drain_order(), (std::vector<uint16_t>{1, 4, 3}));
}

TEST(PfabricQueue, OfEqualQueuedRanksTheLatestIsEvicted) {
  Q t(3000);
  ASSERT_TRUE(t.add(1, 1000, 10, 900));
  ASSERT_TRUE(t.add(2, 1000, 20, 900));
  ASSERT_TRUE(t.add(3, 1000, 30, 100));
  ASSERT_TRUE(t.add(4, 1000, 40, 200));
  EXPECT_EQ(t.evicted_names(), (std::vector<uint16_t>{2}));
  EXPECT_EQ(t.drain_order(), (std::vector<uint16_t>{3, 4, 1}));
}

// A large arrival evicts as many as it needs, lowest priority first.
TEST(PfabricQueue, EvictsRepeatedlyUntilTheArrivalFits) {
  Q t(3000);
  ASSERT_TRUE(t.add(1, 1000, 10, 500));
  ASSERT_TRUE(t.add(2, 500, 20, 700));
  ASSERT_TRUE(t.add(3, 1000, 30, 100));
  ASSERT_TRUE(t.add(4, 500, 40, 600));
  // 3000 queued; 1400 more need 1400 freed: 700 (500 B), 600 (500 B), 500 (1000 B).
  ASSERT_TRUE(t.add(5, 1400, 50, 50));
  EXPECT_EQ(t.evicted_names(), (std::vector<uint16_t>{2, 4, 1}));
  EXPECT_EQ(t.q.bytes(), 2400u);
  EXPECT_EQ(t.q.packets(), 2u);
  EXPECT_EQ(t.drain_order(), (std::vector<uint16_t>{5, 3}));
}

// Evictions go on while the queued lowest priority ranks below the arrival;
// when a queued packet ranks above it first, the arrival is dropped, after
// the lower ones already went.
TEST(PfabricQueue, ArrivalMayEvictLowerPacketsAndStillBeDropped) {
  Q t(3000);
  ASSERT_TRUE(t.add(1, 1000, 10, 100));
  ASSERT_TRUE(t.add(2, 1000, 20, 900));
  ASSERT_TRUE(t.add(3, 500, 30, 50));
  // 2500 B of rank 60 on 2500 queued: rank 900 goes (4000 left to fit in
  // 3000), then rank 100 (500 + 2500 = 3000 fits).
  ASSERT_TRUE(t.add(4, 2500, 40, 60));
  EXPECT_EQ(t.evicted_names(), (std::vector<uint16_t>{2, 1}));
  EXPECT_EQ(t.q.bytes(), 3000u);
  // 2900 B of rank 55: rank 60 goes (500 + 2900 = 3400 still too much),
  // then the lowest queued is rank 50, above 55: the arrival is dropped.
  EXPECT_FALSE(t.add(5, 2900, 50, 55));
  EXPECT_EQ(t.evicted_names(), (std::vector<uint16_t>{4}));
  EXPECT_EQ(t.q.packets(), 1u);
  EXPECT_EQ(t.q.bytes(), 500u);
  EXPECT_EQ(t.drain_order(), (std::vector<uint16_t>{3}));
}

TEST(PfabricQueue, EvictionsStopAtTheCallersRoom) {
  PfabricQueue q(3000);
  TmPacket out[1];
  unsigned n = 0;
  ASSERT_TRUE(q.enqueue(0, packet(1, 1000), 1, 900, out, 1, &n));
  ASSERT_TRUE(q.enqueue(1, packet(2, 1000), 2, 800, out, 1, &n));
  ASSERT_TRUE(q.enqueue(2, packet(3, 1000), 3, 700, out, 1, &n));
  // Two evictions would be needed, the caller has room for one.
  EXPECT_FALSE(q.enqueue(3, packet(4, 2000), 4, 1, out, 1, &n));
  ASSERT_EQ(n, 1u);
  EXPECT_EQ(out[0].aux, 1);
  EXPECT_EQ(q.packets(), 2u);
  EXPECT_EQ(q.bytes(), 2000u);
}

TEST(PfabricQueue, PacketLargerThanTheBufferEvictsNothing) {
  Q t(3000);
  ASSERT_TRUE(t.add(1, 1000, 10, 900));
  EXPECT_FALSE(t.add(2, 3001, 20, 0));
  EXPECT_EQ(t.n_evicted, 0u);
  EXPECT_EQ(t.q.packets(), 1u);
  // Exactly the buffer fits once the rest is gone.
  EXPECT_TRUE(t.add(3, 3000, 30, 0));
  EXPECT_EQ(t.evicted_names(), (std::vector<uint16_t>{1}));
}

// The buffer holds capacity / 60 packets whatever their bytes: a full count
// is full as a full buffer is.
TEST(PfabricQueue, PacketCountIsLimitedByMinimumFrames) {
  Q t(150);  // 2 packets
  EXPECT_EQ(t.q.max_packets(), 2u);
  ASSERT_TRUE(t.add(1, 10, 10, 300));
  ASSERT_TRUE(t.add(2, 10, 20, 200));
  ASSERT_TRUE(t.add(3, 10, 30, 100));
  EXPECT_EQ(t.evicted_names(), (std::vector<uint16_t>{1}));
  EXPECT_FALSE(t.add(4, 10, 40, 400));
  EXPECT_EQ(PfabricQueue(1).max_packets(), 1u);
  EXPECT_EQ(PfabricQueue(uint64_t{1} << 40).max_packets(), PfabricQueue::kMaxPackets);
}

TEST(PfabricQueue, BytesAndEnqueueTimeAreKept) {
  Q t(10'000);
  ASSERT_TRUE(t.add(1, 1500, 10, 3));
  ASSERT_TRUE(t.add(2, 64, 20, 2));
  ASSERT_TRUE(t.add(3, 900, 30, 1));
  EXPECT_EQ(t.q.bytes(), 2464u);
  EXPECT_EQ(t.q.packets(), 3u);
  TmPacket p;
  ASSERT_TRUE(t.q.dequeue(&p));
  EXPECT_EQ(p.aux, 3);
  EXPECT_EQ(p.bytes, 900u);
  EXPECT_EQ(p.enqueue_ns, 300u);  // the third add, at 300 ns
  EXPECT_EQ(t.q.bytes(), 1564u);
  EXPECT_EQ(t.q.capacity_bytes(), 10'000u);
}

TEST(PfabricQueue, DrainHandsOverEveryPacketInArrivalOrder) {
  Q t(10'000);
  for (uint16_t i = 1; i <= 5; ++i) ASSERT_TRUE(t.add(i, 1000, i % 2, 100 - i));
  std::vector<uint16_t> got;
  uint64_t bytes = 0;
  t.q.drain([&](const TmPacket& p) {
    got.push_back(p.aux);
    bytes += p.bytes;
  });
  EXPECT_EQ(got, (std::vector<uint16_t>{1, 2, 3, 4, 5}));
  EXPECT_EQ(bytes, 5000u);
  EXPECT_EQ(t.q.packets(), 0u);
  EXPECT_EQ(t.q.bytes(), 0u);
  TmPacket p;
  EXPECT_FALSE(t.q.dequeue(&p));
  ASSERT_TRUE(t.add(9, 1000, 1, 1));  // usable again
  EXPECT_EQ(t.drain_order(), (std::vector<uint16_t>{9}));
}

// A port at 10 Gb/s (1500-B frames leave every 1200 ns) with a 6000-B
// buffer, on a simulated clock. A long flow (rank = its remaining bytes, from
// 1 MB down) arrives at twice the port's rate, so its backlog grows by a
// frame every 1200 ns; a short flow of 3 frames (ranks 4500, 3000, 1500)
// arrives from t = 6000 ns, one frame every 600 ns. The short flow's frames
// leave at the next three departures, in its order; the full buffer drops
// only the long flow's frames: its earliest queued ones, whose remaining
// bytes were the largest when they were sent.
TEST(PfabricQueue, ShortFlowOvertakesAndLongFlowAbsorbsTheDrops) {
  PfabricQueue q(6000);
  TmPacket ev[4];
  unsigned n = 0;
  std::vector<uint16_t> sent, dropped;
  uint32_t long_rank = 1'000'000;
  uint16_t name = 0;
  uint32_t short_left = 3;
  uint64_t next_tx = 0;
  for (uint64_t t = 0; t <= 12'000; t += 600) {
    // Two long-flow frames arrive every 1200 ns (600 ns apart).
    const uint16_t id = ++name;
    if (!q.enqueue(t, packet(id, 1500), 1, long_rank, ev, 4, &n)) dropped.push_back(id);
    for (unsigned i = 0; i < n; ++i) dropped.push_back(ev[i].aux);
    long_rank -= 1500;
    if (t >= 6000 && short_left > 0) {
      const uint16_t sid = static_cast<uint16_t>(1000 + short_left);
      ASSERT_TRUE(q.enqueue(t, packet(sid, 1500), 2, short_left * 1500, ev, 4, &n));
      for (unsigned i = 0; i < n; ++i) dropped.push_back(ev[i].aux);
      --short_left;
    }
    if (t >= next_tx) {
      TmPacket p;
      if (q.dequeue(&p)) {
        sent.push_back(p.aux);
        next_tx = t + 1200;
      }
    }
  }
  // The short flow's three frames (1003, 1002, 1001) each leave at the first
  // departure after their arrival: 6000, 7200, 8400.
  std::vector<uint16_t> short_sent;
  size_t first_short = sent.size();
  for (size_t i = 0; i < sent.size(); ++i) {
    if (sent[i] >= 1000) {
      short_sent.push_back(sent[i]);
      first_short = std::min(first_short, i);
    }
  }
  EXPECT_EQ(short_sent, (std::vector<uint16_t>{1003, 1002, 1001}));
  EXPECT_EQ(sent[first_short + 1], 1002);
  EXPECT_EQ(sent[first_short + 2], 1001);
  // Drops happened, and all were the long flow's.
  ASSERT_FALSE(dropped.empty());
  for (uint16_t d : dropped) EXPECT_LT(d, 1000) << d;
  // The long flow's frames that left did so in its order.
  uint16_t last = 0;
  for (uint16_t s : sent) {
    if (s >= 1000) continue;
    EXPECT_GT(s, last);
    last = s;
  }
}

}  // namespace
}  // namespace sluice
