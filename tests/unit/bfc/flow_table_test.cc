#include "lib/bfc/flow_table.h"

#include <gtest/gtest.h>

#include <array>
#include <stdexcept>

namespace sluice {
namespace {

constexpr std::array<bool, 1> kOne = {true};

TEST(BfcFlowTable, SizeIsFactorTimesQueuesOfTheEgressPorts) {
  const std::array<bool, 5> four = {true, true, false, true, true};
  EXPECT_EQ(FlowTable(four, 32).size(), 12800u);  // default factor 100
  EXPECT_EQ(FlowTable(four, 32).slice_size(), 3200u);
  EXPECT_EQ(FlowTable(kOne, 10, 3).size(), 30u);
  const std::array<bool, 2> none = {false, false};
  EXPECT_THROW(FlowTable(none, 32), std::invalid_argument);
  EXPECT_THROW(FlowTable(kOne, 0), std::invalid_argument);
  EXPECT_THROW(FlowTable(kOne, 10, 0), std::invalid_argument);
  const std::array<bool, 8> many = {true, true, true, true, true, true, true, true};
  EXPECT_THROW(FlowTable(many, 64, 10'000'000), std::invalid_argument);  // > 2^32
}

TEST(BfcFlowTable, EachEgressPortHasItsOwnSlice) {
  const std::array<bool, 4> ports = {true, false, true, true};
  FlowTable t(ports, 10, 100);  // 3 slices of 1000
  EXPECT_EQ(t.index(0, 1234), 234u);
  EXPECT_EQ(t.index(2, 1234), 1000u + 234u);
  EXPECT_EQ(t.index(3, 0xFFFFFFFFu), 2000u + 4294967295u % 1000u);
  EXPECT_FALSE(t.has_slice(1));  // another lcore's port
  EXPECT_FALSE(t.has_slice(4));
  EXPECT_TRUE(t.has_slice(3));
}

TEST(BfcFlowTable, PacketsAndLastActivityFollowEnqueueAndDeparture) {
  FlowTable t(kOne, 1, 10);
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
  FlowTable t(kOne, 1, 10);                       // 10 entries: hashes equal mod 10 share an entry
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

TEST(BfcFlowTable, SameHashOnAnotherEgressIsAnotherEntry) {
  const std::array<bool, 2> two = {true, true};
  FlowTable t(two, 1, 1);  // one entry per port
  uint32_t i = 0, j = 0;
  t.claim(0, 5, &i).used = true;
  t.on_enqueue(i, 1);
  t.claim(1, 6, &j);  // a different flow, but on port 1: its own entry
  EXPECT_NE(i, j);
  EXPECT_FALSE(t.at(j).used);
  EXPECT_EQ(t.index_collisions(), 0u);
}

}  // namespace
}  // namespace sluice
