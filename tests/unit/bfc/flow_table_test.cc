#include "lib/bfc/flow_table.h"

#include <gtest/gtest.h>

#include <stdexcept>

namespace sluice {
namespace {

TEST(BfcFlowTable, SizeIsFactorTimesQueues) {
  EXPECT_EQ(FlowTable(4 * 32).size(), 12800u);  // default factor 100
  EXPECT_EQ(FlowTable(10, 3).size(), 30u);
  EXPECT_THROW(FlowTable(0), std::invalid_argument);
  EXPECT_THROW(FlowTable(10, 0), std::invalid_argument);
}

TEST(BfcFlowTable, IndexIsHashPlusEgressStrideModSize) {
  FlowTable t(10, 100);  // 1000 entries
  EXPECT_EQ(t.index(0, 1234), 234u);
  // 0x9E3779B1 = 2654435761; 2654435761 mod 1000 = 761.
  EXPECT_EQ(t.index(1, 1234), (234u + 761u) % 1000u);
  EXPECT_EQ(t.index(2, 0), (2u * 761u) % 1000u);
  EXPECT_EQ(t.index(0, 0xFFFFFFFFu), 4294967295u % 1000u);
}

TEST(BfcFlowTable, PacketsAndLastActivityFollowEnqueueAndDeparture) {
  FlowTable t(1, 10);
  uint32_t i = 0;
  t.claim(0, 7, &i);
  EXPECT_EQ(i, 7u);
  t.on_enqueue(i, 100);
  t.on_enqueue(i, 200);
  EXPECT_EQ(t.at(i).packets, 2u);
  EXPECT_EQ(t.at(i).last_active_ns, 200u);
  EXPECT_EQ(t.occupied(), 1u);
  t.on_departure(i, 300);
  EXPECT_EQ(t.occupied(), 1u);
  t.on_departure(i, 450);
  EXPECT_EQ(t.at(i).packets, 0u);
  EXPECT_EQ(t.at(i).last_active_ns, 450u);
  EXPECT_EQ(t.occupied(), 0u);
}

TEST(BfcFlowTable, IndexCollisionCountedOnlyWhileOtherFlowHasPackets) {
  FlowTable t(1, 10);                             // 10 entries: hashes equal mod 10 share an entry
  const uint32_t a = 0x000A0003, b = 0x00140003;  // both 3 mod 10; tags 10 and 20
  uint32_t i = 0, j = 0;
  FlowEntry& e = t.claim(0, a, &i);
  e.used = true;  // the assigner marks it when it assigns a queue
  t.on_enqueue(i, 10);
  t.claim(0, a, &j);  // the same flow again: no collision
  EXPECT_EQ(t.index_collisions(), 0u);
  t.claim(0, b, &j);  // another flow while a's packet is here
  EXPECT_EQ(j, i);
  EXPECT_EQ(t.index_collisions(), 1u);
  EXPECT_EQ(t.at(i).tag, 20u);
  t.on_departure(i, 20);
  t.claim(0, a, &j);  // entry idle: a takes it back without a collision
  EXPECT_EQ(t.index_collisions(), 1u);
}

TEST(BfcFlowTable, SameTagOnAnotherEgressIsACollision) {
  FlowTable t(1, 1);  // one entry: everything collides
  uint32_t i = 0;
  t.claim(0, 5, &i).used = true;
  t.on_enqueue(i, 1);
  t.claim(1, 5, &i);
  EXPECT_EQ(t.index_collisions(), 1u);
}

}  // namespace
}  // namespace sluice
