// The admission test as DIBS asks it of a candidate port: exact for a port
// the lcore owns, and the room an owner publishes for the other lcores.
// Time is simulated: it only matters through pauses and departures.
#include "lib/mechanisms/dibs/detour_admission.h"

#include <gtest/gtest.h>

namespace sluice {
namespace {

TmPacket packet(uint32_t bytes) {
  TmPacket p;
  p.bytes = bytes;
  return p;
}

EgressPortConfig config(uint32_t queues = 4, uint32_t capacity = 64) {
  EgressPortConfig cfg;
  cfg.num_queues = queues;
  cfg.queue_capacity = capacity;
  return cfg;
}

// A 100 KB buffer with alpha 1: one queue alone stops at 50 KB.
struct Fixture {
  SharedBuffer buffer{100'000, 1.0};
  EgressPort port{config(), &buffer};
  void fill(uint16_t q, uint64_t bytes) {
    while (bytes > 0) {
      const uint32_t b = bytes > 1000 ? 1000 : uint32_t(bytes);
      ASSERT_NE(port.enqueue(0, q, packet(b), false).verdict, EnqueueVerdict::kDropped);
      bytes -= b;
    }
  }
};

// detour_admits answers what enqueue then does, at every fill and size.
TEST(DibsAdmission, TheSameAnswerAsEnqueue) {
  for (uint64_t fill = 0; fill <= 60'000; fill += 2'500) {
    for (uint32_t size : {64u, 1000u, 1500u, 9000u}) {
      Fixture f;
      f.fill(0, 10'000);  // another queue's share lowers the threshold for all
      // Up to `fill`, or where the queue refuses (its threshold falls as it grows).
      for (uint64_t done = 0; done < fill; done += 1'000) {
        if (f.port.enqueue(0, 1, packet(1'000), false).verdict == EnqueueVerdict::kDropped) break;
      }
      const bool predicted = detour_admits(f.port, 1, size, 0);
      const EnqueueResult r = f.port.enqueue(0, 1, packet(size), false);
      EXPECT_EQ(predicted, r.verdict != EnqueueVerdict::kDropped)
          << "fill " << fill << " size " << size;
    }
  }
}

TEST(DibsAdmission, AFullRingDoesNotAdmit) {
  SharedBuffer buffer(1'000'000, 1.0);
  EgressPort port(config(1, 16), &buffer);
  for (int i = 0; i < 16; ++i) ASSERT_TRUE(detour_admits(port, 0, 64, 0)) << i;
  for (int i = 0; i < 16; ++i) port.enqueue(0, 0, packet(64), false);
  EXPECT_FALSE(detour_admits(port, 0, 64, 0));
  EXPECT_EQ(detour_room_bytes(port, 0), 0u);
}

// A paused queue or port admits no detour until the pause ends.
TEST(DibsAdmission, APausedQueueOrPortAdmitsNothingUntilItsPauseEnds) {
  Fixture f;
  f.port.pause_queue(2, 5'000);
  EXPECT_FALSE(detour_admits(f.port, 2, 100, 4'999));
  EXPECT_TRUE(detour_admits(f.port, 1, 100, 4'999));
  EXPECT_EQ(detour_room_bytes(f.port, 4'999), 0u);
  EXPECT_TRUE(detour_admits(f.port, 2, 100, 5'000));
  EXPECT_GT(detour_room_bytes(f.port, 5'000), 0u);
  f.port.pause_port(9'000);
  EXPECT_FALSE(detour_admits(f.port, 1, 100, 8'000));
  EXPECT_EQ(detour_room_bytes(f.port, 8'000), 0u);
  EXPECT_TRUE(detour_admits(f.port, 1, 100, 9'000));
}

// The room is the largest packet every queue admits: a packet of that size
// is admitted by the fullest queue, one byte more is not.
TEST(DibsAdmission, RoomIsTheLargestPacketTheFullestQueueAdmits) {
  Fixture f;
  // Empty: min(free, alpha x free) = 100 KB.
  EXPECT_EQ(detour_room_bytes(f.port, 0), 100'000u);
  f.fill(0, 20'000);
  f.fill(3, 30'000);
  // free = 50 KB, threshold = 50 KB; the fullest queue (3) has 20 KB left.
  EXPECT_EQ(detour_room_bytes(f.port, 0), 20'000u);
  EXPECT_TRUE(detour_admits(f.port, 3, 20'000, 0));
  EXPECT_FALSE(detour_admits(f.port, 3, 20'001, 0));
  // With class_map fifo only queue 0 holds data: the room is exactly its own.
  Fixture g;
  g.fill(0, 40'000);  // free 60 KB, threshold 60 KB, queue 0 has 20 KB left
  EXPECT_EQ(detour_room_bytes(g.port, 0), 20'000u);
  EXPECT_TRUE(detour_admits(g.port, 0, 20'000, 0));
  EXPECT_FALSE(detour_admits(g.port, 0, 20'001, 0));
}

// With alpha above 1 the free buffer, not the threshold, is the limit.
TEST(DibsAdmission, RoomNeverExceedsTheFreeBuffer) {
  SharedBuffer buffer(10'000, 8.0);
  EgressPort port(config(), &buffer);
  port.enqueue(0, 0, packet(1'000), false);
  EXPECT_EQ(detour_room_bytes(port, 0), 9'000u);
  EXPECT_TRUE(detour_admits(port, 1, 9'000, 0));
  EXPECT_FALSE(detour_admits(port, 1, 9'001, 0));
}

TEST(DibsSnapshot, AdmitsNothingBeforeItsFirstPublication) {
  PortSnapshot s;
  EXPECT_FALSE(s.admits(64));
  EXPECT_EQ(s.queued_bytes(), 0u);
}

TEST(DibsSnapshot, PublishesQueuedBytesAndRoom) {
  Fixture f;
  f.fill(0, 20'000);
  f.fill(1, 10'000);
  PortSnapshot s;
  publish_snapshot(f.port, 0, 0, &s);
  EXPECT_EQ(s.queued_bytes(), 30'000u);
  // free 70 KB, threshold 70 KB, the fullest queue holds 20 KB
  EXPECT_EQ(s.room_bytes(), 50'000u);
  EXPECT_TRUE(s.admits(50'000));
  EXPECT_FALSE(s.admits(50'001));
}

// Ports owned by different lcores sit in one array without sharing lines.
TEST(DibsSnapshot, OneCacheLineEach) {
  EXPECT_EQ(alignof(PortSnapshot), 64u);
  EXPECT_EQ(sizeof(PortSnapshot), 64u);
}

}  // namespace
}  // namespace sluice

namespace sluice {
namespace {

// A reader's detours on their way to another lcore's port take the room its
// snapshot shows until the owner has taken them off the ring.
TEST(SnapshotClaims, DetoursOnTheirWayTakeTheRoomUntilTheOwnerCountsThem) {
  PortSnapshot s;
  s.publish(0, 4'000, 0);
  SnapshotClaims c;
  EXPECT_TRUE(c.admits(s, 1'500));
  c.claim(1'500);
  c.claim(1'500);
  EXPECT_FALSE(c.admits(s, 1'500));  // 3,000 on the way + 1,500 > 4,000
  EXPECT_TRUE(c.admits(s, 1'000));
  // The owner took both (its queue now holds them: room 1,000 left).
  s.publish(3'000, 1'000, 3'000);
  EXPECT_TRUE(c.admits(s, 1'000));
  EXPECT_FALSE(c.admits(s, 1'001));
  // Another reader's detours the owner counted never make this one's negative.
  s.publish(3'000, 1'000, 9'000);
  EXPECT_TRUE(c.admits(s, 1'000));
}

}  // namespace
}  // namespace sluice
