// The host NIC's send queues: which queue a key gets and keeps, FIFO order,
// capacity. Time is simulated.
#include "lib/emulator/nic/nic_queues.h"

#include <gtest/gtest.h>

#include <vector>

namespace sluice {
namespace {

NicFrame frame(uint32_t id) { return NicFrame{0, id, 100, 0, 0}; }

std::vector<uint32_t> drain(NicQueues& q, uint32_t queue) {
  std::vector<uint32_t> ids;
  while (q.frames(queue) != 0) {
    ids.push_back(q.head(queue).id);
    q.pop(queue, 0);
  }
  return ids;
}

TEST(NicQueues, NewKeysTakeFreeQueuesFromARotatingStart) {
  NicQueues q(4, 100, 0);
  EXPECT_EQ(q.queue_of(10, 0, 0), 0u);
  q.push(0, frame(1), 0);
  EXPECT_EQ(q.queue_of(20, 0, 0), 1u);
  q.push(1, frame(2), 0);
  EXPECT_EQ(q.queue_of(10, 0, 0), 0u) << "a key keeps a queue that holds its frames";
  drain(q, 0);
  // Queue 0 is free again, but the search goes on from queue 2.
  EXPECT_EQ(q.queue_of(30, 0, 0), 2u);
  EXPECT_EQ(q.collisions.get(), 0u);
}

TEST(NicQueues, EveryQueueTakenMeansSharingByKeyModulo) {
  NicQueues q(2, 100, 0);
  q.push(q.queue_of(7, 0, 0), frame(1), 0);
  q.push(q.queue_of(8, 0, 0), frame(2), 0);
  EXPECT_EQ(q.queue_of(9, 0, 0), 1u);  // 9 % 2
  EXPECT_EQ(q.queue_of(12, 0, 0), 0u);
  EXPECT_EQ(q.collisions.get(), 2u);
}

TEST(NicQueues, StickyTimeAndHeldQueuesKeepTheirKey) {
  NicQueues q(2, 100, 1000);
  const uint32_t a = q.queue_of(1, 0, 0);
  q.push(a, frame(1), 0);
  q.pop(a, 500);  // empty, active at 500
  EXPECT_EQ(q.queue_of(1, 1499, 0), a) << "within sticky: same queue";
  const uint32_t b = q.queue_of(2, 1499, 0);
  EXPECT_NE(b, a) << "a sticky queue is not free for another key";
  // Past the sticky time an empty queue is free, unless the network holds it.
  const uint64_t held = uint64_t{1} << a;
  EXPECT_EQ(q.queue_of(1, 10'000, held), a) << "a held queue stays its key's";
  EXPECT_NE(q.queue_of(3, 10'000, held), a);
  EXPECT_EQ(q.queue_of(4, 20'000, 0), a) << "free once neither holds";
}

TEST(NicQueues, FifoPerQueueAndCapacity) {
  NicQueues q(2, 3, 0);
  q.push(0, frame(1), 0);
  q.push(1, frame(2), 0);
  q.push(0, frame(3), 0);
  EXPECT_TRUE(q.full());
  EXPECT_EQ(q.held(), 3u);
  EXPECT_EQ(q.nonempty_mask(), 0b11u);
  EXPECT_EQ(drain(q, 0), (std::vector<uint32_t>{1, 3}));
  EXPECT_FALSE(q.full());
  EXPECT_EQ(q.nonempty_mask(), 0b10u);
  // Freed nodes are reused.
  q.push(0, frame(4), 0);
  q.push(0, frame(5), 0);
  EXPECT_EQ(drain(q, 0), (std::vector<uint32_t>{4, 5}));
  EXPECT_EQ(drain(q, 1), (std::vector<uint32_t>{2}));
  EXPECT_EQ(q.held(), 0u);
}

TEST(NicQueues, QueueCountIsClamped) {
  EXPECT_EQ(NicQueues(0, 1, 0).num_queues(), 1u);
  EXPECT_EQ(NicQueues(1000, 1, 0).num_queues(), NicQueues::kMaxQueues);
}

}  // namespace
}  // namespace sluice
