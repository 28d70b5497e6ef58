#include "lib/tm/packet_queue.h"

#include <gtest/gtest.h>

namespace sluice {
namespace {

TmPacket packet(uint32_t bytes) {
  TmPacket p;
  p.bytes = bytes;
  return p;
}

TEST(PacketQueue, EmptiedRingRewindsToSlotZero) {
  PacketQueue q(8);
  q.push(packet(100));
  q.push(packet(200));
  EXPECT_EQ(q.pop().bytes, 100u);
  EXPECT_EQ(q.head_index(), 1u);  // not empty yet: no rewind
  EXPECT_EQ(q.pop().bytes, 200u);
  EXPECT_TRUE(q.empty());
  EXPECT_EQ(q.head_index(), 0u);
  EXPECT_EQ(q.tail_index(), 0u);
  EXPECT_EQ(q.bytes(), 0u);
  q.push(packet(300));
  EXPECT_EQ(&q.front(), q.ring());  // the next packet reuses slot 0
}

TEST(PacketQueue, PopRunThatEmptiesRewinds) {
  PacketQueue q(4);
  for (uint32_t i = 0; i < 3; ++i) q.push(packet(10 + i));
  q.pop_run(q.head_index() + 2, 10 + 11);
  EXPECT_EQ(q.head_index(), 2u);
  EXPECT_EQ(q.packets(), 1u);
  EXPECT_EQ(q.bytes(), 12u);
  q.pop_run(q.head_index() + 1, 12);
  EXPECT_EQ(q.head_index(), 0u);
  EXPECT_EQ(q.tail_index(), 0u);
  EXPECT_EQ(q.packets(), 0u);
}

TEST(PacketQueue, FifoOrderAcrossManyRewindsAndWraps) {
  PacketQueue q(4);
  uint32_t next_in = 0, next_out = 0;
  // Fill and drain in varying amounts, so runs both wrap the ring and rewind.
  for (int round = 0; round < 50; ++round) {
    const uint32_t n = 1 + round % 4;
    for (uint32_t i = 0; i < n && !q.full(); ++i) q.push(packet(next_in++));
    const uint32_t take = round % 3 == 0 ? q.size() : (q.size() + 1) / 2;
    for (uint32_t i = 0; i < take; ++i) ASSERT_EQ(q.pop().bytes, next_out++);
  }
  while (!q.empty()) ASSERT_EQ(q.pop().bytes, next_out++);
  EXPECT_EQ(next_in, next_out);
}

}  // namespace
}  // namespace sluice
