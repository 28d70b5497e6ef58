#include "lib/mechanisms/bfc/flow_table.h"

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

// index() computes the remainder without a division; it must equal hash % slice
// for every slice size and hash, including the extremes.
TEST(BfcFlowTable, IndexIsHashModSliceForEverySliceSize) {
  const uint32_t slices[] = {1, 2, 3, 7, 10, 640, 1000, 3200, 6400, 65535, 65536, 100'003};
  const uint32_t hashes[] = {0,          1,          2,          0x7FFFFFFF, 0x80000000,
                             0xFFFFFFFE, 0xFFFFFFFF, 0x9E3779B9, 0x12345678, 0xDEADBEEF};
  for (uint32_t slice : slices) {
    FlowTable t(kOne, 1, slice);
    for (uint32_t h : hashes) EXPECT_EQ(t.index(0, h), h % slice) << h << " mod " << slice;
    for (uint32_t x = 1, i = 0; i < 10'000; ++i) {  // xorshift32
      x ^= x << 13;
      x ^= x >> 17;
      x ^= x << 5;
      ASSERT_EQ(t.index(0, x), x % slice) << x << " mod " << slice;
    }
  }
}

TEST(BfcFlowTable, PacketsAndLastActivityFollowEnqueueAndDeparture) {
  FlowTable t(kOne, 1, 10);
  const uint32_t i = t.index(0, 7);
  EXPECT_EQ(i, 7u);
  t.on_enqueue(i, 7, 100);
  t.on_enqueue(i, 7, 200);
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

TEST(BfcFlowTable, IndexCollisionCountedOncePerFlowWhileOtherFlowHasPackets) {
  FlowTable t(kOne, 1, 10);                       // 10 entries: hashes equal mod 10 share an entry
  const uint32_t a = 0x000A0003, b = 0x00140003;  // both 3 mod 10; tags 10 and 20
  const uint32_t c = 0x00150003;                  // tag 21
  const uint32_t i = t.index(0, a);
  EXPECT_EQ(t.index(0, b), i);
  t.on_enqueue(i, a, 10);
  t.on_enqueue(i, a, 11);  // the same flow again: no collision
  EXPECT_EQ(t.index_collisions(), 0u);
  EXPECT_EQ(t.at(i).tag, 10u);
  t.on_enqueue(i, b, 12);  // another flow while a's packets are here
  t.on_enqueue(i, a, 13);
  t.on_enqueue(i, b, 14);  // b again: counted already
  EXPECT_EQ(t.index_collisions(), 1u);
  EXPECT_EQ(t.at(i).tag, 10u);  // still a's entry
  t.on_enqueue(i, c, 15);
  EXPECT_EQ(t.index_collisions(), 2u);
  for (int k = 0; k < 6; ++k) t.on_departure(i, 20);
  t.on_enqueue(i, b, 30);  // entry idle: b takes it without a collision
  EXPECT_EQ(t.index_collisions(), 2u);
  EXPECT_EQ(t.at(i).tag, 20u);
  t.on_enqueue(i, a, 31);  // a joins b: a new occupancy, a new collision
  EXPECT_EQ(t.index_collisions(), 3u);
}

TEST(BfcFlowTable, SameHashOnAnotherEgressIsAnotherEntry) {
  const std::array<bool, 2> two = {true, true};
  FlowTable t(two, 1, 1);  // one entry per port
  const uint32_t i = t.index(0, 5), j = t.index(1, 0x00070005);
  EXPECT_NE(i, j);
  t.on_enqueue(i, 5, 1);
  t.on_enqueue(j, 0x00070005, 2);  // another flow, but on port 1: its own entry
  EXPECT_EQ(t.index_collisions(), 0u);
  EXPECT_EQ(t.occupied(), 2u);
}

}  // namespace
}  // namespace sluice
