#include "lib/mechanisms/pfc/pause_quanta.h"

#include <gtest/gtest.h>

#include "lib/mechanisms/pfc/pfc_classes.h"
#include "lib/tm/class_map.h"

namespace sluice {
namespace {

constexpr uint64_t kG = 1'000'000'000ull;

// One quantum = 512 bit times: 512 ns at 1G, 51.2 ns at 10G, 20.48 ns at
// 25G, 5.12 ns at 100G; fractional results round up.
TEST(PauseQuanta, ToNanosecondsByHand) {
  EXPECT_EQ(quanta_to_ns(0, 10 * kG), 0u);
  EXPECT_EQ(quanta_to_ns(1, 1 * kG), 512u);
  EXPECT_EQ(quanta_to_ns(0xFFFF, 1 * kG), 33'553'920u);
  EXPECT_EQ(quanta_to_ns(1, 10 * kG), 52u);   // 51.2
  EXPECT_EQ(quanta_to_ns(5, 10 * kG), 256u);  // exactly 256
  EXPECT_EQ(quanta_to_ns(0xFFFF, 10 * kG), 3'355'392u);
  EXPECT_EQ(quanta_to_ns(1, 25 * kG), 21u);  // 20.48
  EXPECT_EQ(quanta_to_ns(100, 25 * kG), 2048u);
  EXPECT_EQ(quanta_to_ns(0xFFFF, 25 * kG), 1'342'157u);  // 1,342,156.8
  EXPECT_EQ(quanta_to_ns(1, 100 * kG), 6u);              // 5.12
  EXPECT_EQ(quanta_to_ns(1000, 100 * kG), 5120u);
  EXPECT_EQ(quanta_to_ns(0xFFFF, 100 * kG), 335'540u);  // 335,539.2
}

TEST(PauseQuanta, FromNanosecondsRoundsUpAndSaturates) {
  EXPECT_EQ(ns_to_quanta(0, 10 * kG), 0);
  EXPECT_EQ(ns_to_quanta(51, 10 * kG), 1);   // 51 < 51.2
  EXPECT_EQ(ns_to_quanta(52, 10 * kG), 2);   // 52 > 51.2
  EXPECT_EQ(ns_to_quanta(256, 10 * kG), 5);  // exact
  EXPECT_EQ(ns_to_quanta(3'355'392, 10 * kG), 0xFFFF);
  EXPECT_EQ(ns_to_quanta(1'000'000, 1 * kG), 1954);      // 1953.125
  EXPECT_EQ(ns_to_quanta(1'000'000, 100 * kG), 0xFFFF);  // 195312.5 saturates
  EXPECT_EQ(ns_to_quanta(UINT64_MAX, 400 * kG), 0xFFFF);
}

TEST(PfcClasses, DefaultMappingWith32QueuesIsFourPerClass) {
  ClassQueueMasks m = default_class_queues(32);
  for (uint32_t c = 0; c < 8; ++c) EXPECT_EQ(m[c], uint64_t{0xF} << (4 * c)) << c;
  // With DSCP classification, a queue's priority is the class selector.
  for (uint8_t dscp = 0; dscp < 64; ++dscp) {
    EXPECT_EQ(priority_of_queue(queue_for_dscp(dscp, 32), 32), dscp >> 3) << int(dscp);
    EXPECT_EQ(priority_of_queue(queue_for_dscp(dscp, 8), 8), dscp >> 3) << int(dscp);
  }
}

TEST(PfcClasses, FewerQueuesThanClassesShareTheNearestLowerQueue) {
  ClassQueueMasks four = default_class_queues(4);  // queue priorities 0, 2, 4, 6
  ClassQueueMasks want4 = {0b1, 0b1, 0b10, 0b10, 0b100, 0b100, 0b1000, 0b1000};
  EXPECT_EQ(four, want4);
  ClassQueueMasks one = default_class_queues(1);
  for (uint64_t m : one) EXPECT_EQ(m, 1u);
  // 12 queues: priorities 0 0 1 2 2 3 4 4 5 6 6 7.
  ClassQueueMasks twelve = default_class_queues(12);
  ClassQueueMasks want12 = {0b11,       0b100,       0b11000,       0b100000,
                            0b11000000, 0b100000000, 0b11000000000, 0b100000000000};
  EXPECT_EQ(twelve, want12);
  ClassQueueMasks sixty_four = default_class_queues(64);
  EXPECT_EQ(sixty_four[7], 0xFF00000000000000ull);
}

}  // namespace
}  // namespace sluice
