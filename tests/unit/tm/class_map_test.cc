#include "lib/tm/class_map.h"

#include <gtest/gtest.h>

namespace sluice {
namespace {

TEST(ClassMap, DscpSpreadsEvenlyUpward) {
  EXPECT_EQ(queue_for_dscp(0, 32), 0);
  EXPECT_EQ(queue_for_dscp(1, 32), 0);  // 32/64
  EXPECT_EQ(queue_for_dscp(2, 32), 1);  // 64/64
  EXPECT_EQ(queue_for_dscp(46, 8), 5);  // EF: 368/64 = 5.75
  EXPECT_EQ(queue_for_dscp(63, 32), 31);
  EXPECT_EQ(queue_for_dscp(63, 64), 63);
  EXPECT_EQ(queue_for_dscp(63, 1), 0);
  EXPECT_EQ(queue_for_dscp(24, 3), 1);  // 72/64
}

TEST(ClassMap, SingleFifoUsesQueueZero) {
  EXPECT_EQ(queue_for_class(ClassMapping::kSingleFifo, 63, 32), 0);
  EXPECT_EQ(queue_for_class(ClassMapping::kDscp, 63, 32), 31);
}

}  // namespace
}  // namespace sluice
